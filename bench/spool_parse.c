// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// bench/read_cost.sh's floor: every batch file of a spool read whole and parsed with cJSON
// (the library the reader uses), nothing kept. `spool_parse DIR/spool` prints the files and
// bytes read and the spans parsed.
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct dirent **list;
	size_t files = 0, bytes = 0, spans = 0;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: spool_parse DIR/spool\n");
		return 64;
	}
	n = scandir(argv[1], &list, NULL, alphasort);
	if (n < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096], *text;
		long size;
		FILE *f;
		cJSON *j;

		if (list[i]->d_name[0] == '.' || !strstr(list[i]->d_name, ".json"))
			goto next;
		snprintf(path, sizeof(path), "%s/%s", argv[1], list[i]->d_name);
		f = fopen(path, "re");
		if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
			goto close;
		text = malloc((size_t)size + 1);
		if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
			text[size] = 0;
			j = cJSON_Parse(text);
			spans += (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(j, "spans"));
			cJSON_Delete(j);
			files++;
			bytes += (size_t)size;
		}
		free(text);
close:
		if (f)
			fclose(f);
next:
		free(list[i]);
	}
	free(list);
	printf("%zu files, %zu bytes, %zu spans\n", files, bytes, spans);
	return 0;
}
