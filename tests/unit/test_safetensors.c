// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The safetensors writer (sink/safetensors.c) against the format's spec: an 8-byte
// little-endian header length N, N bytes of JSON (padded with spaces so the data starts
// 8-aligned), then the tensors' bytes back to back, data_offsets [begin, end) relative to the
// data's start, covering it without holes; a file appears only when whole.
#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/stat.h>
#include "sink/safetensors.h"
#include "unit.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static int entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static void check_offsets(const cJSON *t, double begin, double end, const char *name)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");

	ASSERT_EQ(cJSON_GetArraySize(o), 2, name);
	ASSERT_DBL_EQ(cJSON_GetArrayItem(o, 0)->valuedouble, begin, name);
	ASSERT_DBL_EQ(cJSON_GetArrayItem(o, 1)->valuedouble, end, name);
}

static void header_and_data(void)
{
	char root[256], dir[300], path[400];
	const int64_t s1[] = { 2, 3 }, s2[] = { 4 };
	const struct st_entry e[] = {
		{ .name = "fc.weight", .dtype = "F32", .dim = 2, .shape = s1, .nbytes = 24 },
		{ .name = "emb", .dtype = "BF16", .dim = 1, .shape = s2, .nbytes = 8 },
	};
	const char *meta[] = { "format", "pt", "consistency", "live", NULL };
	float w[6] = { 1, 2, 3, 4, 5, 6 };
	uint16_t b[4] = { 0x3f80, 0x4000, 0x4040, 0x4080 };
	struct st_writer st;
	uint64_t hlen = 0;
	size_t len = 0;
	cJSON *h, *t;
	char *buf;

	if (!unit__mkdtemp(root, sizeof(root)))
		return;
	snprintf(dir, sizeof(dir), "%s/snapshots/7", root);	/* created, parents too */
	if (!ASSERT_OK(safetensors__begin(&st, dir, "weights.safetensors", e, 2, meta), "begin"))
		goto out;
	ASSERT_EQ(entries_in(dir), 1, "a temp file only while written");
	ASSERT_OK(safetensors__append(&st, w, sizeof(w)), "append weights");
	ASSERT_OK(safetensors__append(&st, b, sizeof(b)), "append bf16");
	ASSERT_OK(safetensors__finish(&st), "finish");
	ASSERT_EQ(entries_in(dir), 1, "the file, no temp left");
	snprintf(path, sizeof(path), "%s/weights.safetensors", dir);
	buf = slurp(path, &len);
	if (!ASSERT_OK_PTR(buf, "read back"))
		goto out;
	for (int i = 0; i < 8; i++)
		hlen |= (uint64_t)(unsigned char)buf[i] << (8 * i);
	ASSERT_EQ((8 + hlen) % 8, 0, "data 8-aligned");
	ASSERT_EQ(len, 8 + hlen + 32, "8 + header + data, nothing after");
	ASSERT_EQ(buf[8], '{', "header starts with {");
	for (uint64_t i = hlen; i > 0 && buf[8 + i - 1] != '}'; i--)
		ASSERT_EQ(buf[8 + i - 1], ' ', "padding is spaces");
	h = cJSON_ParseWithLength(buf + 8, hlen);
	if (ASSERT_OK_PTR(h, "header is JSON")) {
		t = cJSON_GetObjectItemCaseSensitive(h, "fc.weight");
		ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "dtype")),
			     "F32", "dtype");
		ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "shape")), 2,
			  "shape rank");
		ASSERT_DBL_EQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "shape"),
						 1)->valuedouble, 3, "shape[1]");
		check_offsets(t, 0, 24, "first tensor from 0");
		t = cJSON_GetObjectItemCaseSensitive(h, "emb");
		ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "dtype")),
			     "BF16", "dtype");
		check_offsets(t, 24, 32, "second right after");
		t = cJSON_GetObjectItemCaseSensitive(h, "__metadata__");
		ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t,
								"consistency")), "live", "metadata");
		ASSERT_EQ(cJSON_GetArraySize(h), 3, "two tensors and __metadata__");
		cJSON_Delete(h);
	}
	ASSERT_OK(memcmp(buf + 8 + hlen, w, 24), "weights' bytes");
	ASSERT_OK(memcmp(buf + 8 + hlen + 24, b, 8), "bf16 bytes");
	free(buf);
out:
	unit__rm_rf(root);
}

static void padding_per_length(void)
{
	char root[256], path[300], name[64];
	int64_t shape[] = { 1 };
	struct st_entry e = { .name = name, .dtype = "F32", .dim = 1, .shape = shape, .nbytes = 4 };
	float one = 1;
	struct st_writer st;

	if (!unit__mkdtemp(root, sizeof(root)))
		return;
	/* names of 1 to 9 characters: every header length mod 8 */
	for (int k = 1; k <= 9; k++) {
		char *buf;
		size_t len = 0;
		uint64_t hlen = 0;

		snprintf(name, sizeof(name), "%.*s", k, "abcdefghi");
		if (!ASSERT_OK(safetensors__begin(&st, root, "p.safetensors", &e, 1, NULL), "begin"))
			break;
		safetensors__append(&st, &one, 4);
		ASSERT_OK(safetensors__finish(&st), "finish");
		snprintf(path, sizeof(path), "%s/p.safetensors", root);
		buf = slurp(path, &len);
		if (!ASSERT_OK_PTR(buf, "read"))
			break;
		memcpy(&hlen, buf, 8);	/* little-endian host */
		ASSERT_EQ(hlen % 8, 0, "header padded to 8");
		ASSERT_EQ(len, 8 + hlen + 4, "size");
		ASSERT_TRUE(!memmem(buf + 8, hlen, "__metadata__", 12), "no __metadata__ if none");
		free(buf);
	}
	unit__rm_rf(root);
}

static void incomplete_is_not_written(void)
{
	char root[256], dir[300];
	int64_t shape[] = { 4 };
	struct st_entry e = { .name = "w", .dtype = "F32", .dim = 1, .shape = shape, .nbytes = 16 };
	float v[4] = {};
	struct st_writer st;

	if (!unit__mkdtemp(root, sizeof(root)))
		return;
	snprintf(dir, sizeof(dir), "%s/d", root);
	ASSERT_OK(safetensors__begin(&st, dir, "w.safetensors", &e, 1, NULL), "begin");
	ASSERT_OK(safetensors__append(&st, v, 8), "half the data");
	ASSERT_EQ(safetensors__finish(&st), -EIO, "short: refused");
	ASSERT_EQ(entries_in(dir), 0, "no file, no temp");
	ASSERT_OK(safetensors__begin(&st, dir, "w.safetensors", &e, 1, NULL), "begin again");
	safetensors__abort(&st);
	ASSERT_EQ(entries_in(dir), 0, "aborted: nothing left");
	unit__rm_rf(root);
}

static void dtype_names(void)
{
	ASSERT_STREQ(safetensors__dtype("float32"), "F32", "float32");
	ASSERT_STREQ(safetensors__dtype("float64"), "F64", "float64");
	ASSERT_STREQ(safetensors__dtype("bfloat16"), "BF16", "bfloat16");
	ASSERT_STREQ(safetensors__dtype("float16"), "F16", "float16");
	ASSERT_NULL(safetensors__dtype("complex64"), "unknown");
}

int main(void)
{
	RUN_TEST(header_and_data);
	RUN_TEST(padding_per_length);
	RUN_TEST(incomplete_is_not_written);
	RUN_TEST(dtype_names);
	return unit__done();
}
