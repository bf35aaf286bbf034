// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// libFuzzer harness for the probes/ loader: probe_set__parse on one JSON text (the files are
// built into the binary, but a damaged build or a hand-edited file must be an error, never a
// crash), then what watch and attach read from a parsed set.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "probedefs/probe_set.h"

static int quiet_fd, stderr_fd;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the loader's one error line per bad file would flood the run: parse with stderr
	 * sent to /dev/null (a sanitizer's report comes after, on the real stderr) */
	quiet_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	stderr_fd = dup(2);
	if (quiet_fd < 0 || stderr_fd < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = malloc(size + 1);
	struct probe_set s;

	if (!json)
		return 0;
	memcpy(json, data, size);
	json[size] = 0;
	memset(&s, 0, sizeof(s));
	if (!getenv("FUZZ_LOUD"))	/* FUZZ_LOUD=1: see the messages (replaying a finding) */
		dup2(quiet_fd, 2);
	int err = probe_set__parse(&s, json, "fuzz");

	dup2(stderr_fd, 2);
	if (!err) {
		for (size_t i = 0; i < s.n; i++) {
			const struct probe_group *g = &s.groups[i];

			if (!g->name)
				abort();
			for (size_t j = 0; j < g->n; j++) {
				const struct probe_def *d = &g->probes[j];

				if (!d->symbol || !probe_action__name(d->action) ||
				    !probe_meaning__name(d->meaning))
					abort();
				probe_def__gives_session(d);
			}
		}
	}
	probe_set__free(&s);
	free(json);
	return 0;
}
