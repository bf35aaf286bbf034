// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdarg.h>
#include "common/exit_codes.h"
#include "read/batch.h"
#include "trace/health.h"
#include "read/spool_view.h"
#include "trace/trace.h"
#include "trace/trace_ranks.h"
#include "read/view.h"
#include "unit.h"

#define SID "vm-42-1000"
#define HEAD(seq, final) "{\"format\":\"cirron-spool/1\",\"session_id\":\"" SID "\",\"pid\":42," \
	"\"rank\":0,\"local_rank\":0,\"world_size\":1,\"host\":\"vm\",\"seq\":" #seq "," \
	"\"written_ns\":1795423440200000000,\"final\":" #final ",\"health\":{\"events\":" #seq "},"
#define ROOT_OPEN "{\"span_id\":1,\"parent_id\":null,\"name\":\"cirron.session\",\"index\":null," \
	"\"start_ns\":1795423440000000000,\"end_ns\":null,\"status\":\"open\",\"attrs\":{}," \
	"\"marks\":[]}"
#define ROOT_OK "{\"span_id\":1,\"parent_id\":null,\"name\":\"cirron.session\",\"index\":null," \
	"\"start_ns\":1795423440000000000,\"end_ns\":1795423441000000000," \
	"\"duration_ns\":1000000000,\"status\":\"ok\",\"attrs\":{\"exit_code\":0},\"marks\":[]}"
#define EPOCH "{\"span_id\":2,\"parent_id\":1,\"name\":\"epoch\",\"index\":0," \
	"\"start_ns\":1795423440100000000,\"end_ns\":1795423440100142000,\"duration_ns\":142000," \
	"\"status\":\"ok\",\"attrs\":{\"note\":\"a, \\\"b\\\"\"},\"marks\":[{\"name\":\"m\"," \
	"\"ts_ns\":1795423440100000001}]}"

static const char *batch0 = HEAD(0, false) "\"spans\":[" ROOT_OPEN "]}\n";
static const char *batch1 = HEAD(1, true) "\"spans\":[" EPOCH "," ROOT_OK "]}\n";
/* as the writer makes them now: each batch says it holds every open span */
static const char *batch1_all_open = HEAD(1, true) "\"all_open\":true,\"spans\":[" EPOCH ","
	ROOT_OK "]}\n";

static char *print(struct spool_view *v, const struct options *o)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_OK_PTR(f, "open_memstream"))
		return NULL;
	ASSERT_OK(trace__print(f, v, o), "trace__print");
	fclose(f);
	return buf;
}

static struct options opts(void)
{
	return (struct options){ .path = ".", .rank = -1 };
}

/* A view of in-memory batch files: NULL-terminated (name, text) pairs, in any order. */
static void load(struct spool_view *v, ...)
{
	struct spool_src src = {};
	const char *name, *text;
	va_list ap;

	va_start(ap, v);
	while ((name = va_arg(ap, const char *))) {
		text = va_arg(ap, const char *);
		ASSERT_OK(spool_src__add_text(&src, name, text), name);
	}
	va_end(ap);
	ASSERT_OK(view__load_src(v, &src), "index");
}

static size_t count_nodes(const cJSON *nodes)
{
	const cJSON *n;
	size_t c = 0;

	cJSON_ArrayForEach(n, nodes)
		c += 1 + count_nodes(cJSON_GetObjectItem(n, "children"));
	return c;
}

/* --format json of the view: its first session's top spans and spans in all. */
static void json_counts(struct spool_view *v, size_t *tops, size_t *spans)
{
	struct options o = opts();
	char *out;
	cJSON *j, *sp;

	o.format = FORMAT_JSON;
	out = print(v, &o);
	j = cJSON_Parse(out);
	sp = cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "spans");
	ASSERT_OK_PTR(j, "valid JSON");
	*tops = (size_t)cJSON_GetArraySize(sp);
	*spans = count_nodes(sp);
	cJSON_Delete(j);
	free(out);
}

static void check_merged(struct spool_view *v)
{
	struct options o = opts();
	struct rsession *s;
	size_t tops, spans;
	char *out;

	if (!ASSERT_EQ(v->nsessions, 1, "sessions"))
		return;
	s = v->sessions[0];
	ASSERT_TRUE(s->final, "final");
	ASSERT_EQ(s->last_seq, 1, "health from the newest batch");
	if (!ASSERT_TRUE(s->has_root, "the root"))
		return;
	ASSERT_EQ(s->root.status, SPAN_OK, "later batch wins");
	ASSERT_U64_EQ(s->root.end_ns - s->root.start_ns, 1000000000, "duration");
	json_counts(v, &tops, &spans);
	ASSERT_EQ(tops, 1, "one root");
	ASSERT_EQ(spans, 2, "spans merged");
	out = print(v, &o);
	ASSERT_HAS_SUBSTR(out, "cirron.session - 1.00s {exit_code=0}\n  epoch[0]", "epoch under the root");
	free(out);
}

/* The root is open in batch 0, ended in batch 1: batch 1 wins whatever the listing order. */
static void merge_in_order(bool newest_first)
{
	struct spool_view v = {};

	if (newest_first)
		load(&v, SID ".00000001.json", batch1, SID ".00000000.json", batch0, NULL);
	else
		load(&v, SID ".00000000.json", batch0, SID ".00000001.json", batch1, NULL);
	check_merged(&v);
	spool_view__free(&v);
}

static void merge_later_batch_wins(void)
{
	merge_in_order(false);
}

static void merge_out_of_order(void)
{
	merge_in_order(true);
}

static void text_tree(void)
{
	struct spool_view v = {};
	struct options o = opts();
	char *out;

	load(&v, SID ".00000000.json", batch0, SID ".00000001.json", batch1, NULL);
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "\ncirron.session - 1.00s {exit_code=0}\n"
			  "  epoch[0] - 142us {note=a, \"b\"} (1 marks)\n", "tree");
	ASSERT_FALSE(out && strstr(out, "open path:"), "no open path when all ended");
	free(out);
	o.name = "epoch";
	out = print(&v, &o);
	ASSERT_STREQ(out, "[cirron] epoch[0] - 142us {note=a, \"b\"}\n", "--name");
	free(out);
	spool_view__free(&v);
}

static void open_path_first(void)
{
	struct spool_view v = {};
	struct options o = opts();
	char *out;

	load(&v, SID ".00000000.json", batch0, NULL);
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "no final batch", "header");
	ASSERT_HAS_SUBSTR(out, "open path:\n  cirron.session (open) since 2026-", "open path");
	ASSERT_HAS_SUBSTR(out, " UTC (200.0ms)\ncirron.session - ? (open)\n", "then the tree");
	free(out);
	spool_view__free(&v);
}

static void elide_long_runs(void)
{
	struct spool_view v = {};
	struct options o = opts();
	char *out, *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (!ASSERT_OK_PTR(f, "open_memstream"))
		return;
	fputs(HEAD(0, true) "\"spans\":[" ROOT_OK, f);
	for (int i = 0; i < 30; i++)
		fprintf(f, ",{\"span_id\":%d,\"parent_id\":1,\"name\":\"step\",\"index\":%d,"
			"\"start_ns\":%d,\"end_ns\":%d,\"duration_ns\":1,\"status\":\"ok\","
			"\"attrs\":{},\"marks\":[]}", i + 10, i, 1000 + i, 1001 + i);
	fputs("]}\n", f);
	fclose(f);
	load(&v, SID ".00000000.json", text, NULL);
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "  step[2] - 1ns\n  ... 25 more step spans ...\n  step[28] - 1ns\n"
			  "  step[29] - 1ns\n", "elided");
	free(out);
	o.all = true;
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "  step[15] - 1ns\n", "--all");
	free(out);
	o.last = 2;
	out = print(&v, &o);
	ASSERT_STREQ(out, "[cirron] step[29] - 1ns\n[cirron] cirron.session - 1.00s {exit_code=0}\n",
		     "--last by end time");
	free(out);
	free(text);
	spool_view__free(&v);
}

static void csv_quoting(void)
{
	struct spool_view v = {};
	struct options o = opts();
	char *out;

	o.format = FORMAT_CSV;
	load(&v, SID ".00000001.json", batch1, NULL);
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "session_id,span_id,parent_id,name,index,rank,start_ns,end_ns,"
			  "duration_ns,status,attrs\n", "header");
	ASSERT_HAS_SUBSTR(out, ",142000,ok,\"note=a, \"\"b\"\"\"\n", "quoted attrs");
	ASSERT_HAS_SUBSTR(out, SID ",1,,cirron.session,,0,", "null parent and index empty");
	free(out);
	spool_view__free(&v);
}

static void json_nested(void)
{
	struct spool_view v = {};
	struct options o = opts();
	char *out;
	cJSON *j;

	o.format = FORMAT_JSON;
	load(&v, SID ".00000001.json", batch1, NULL);
	out = print(&v, &o);
	j = cJSON_Parse(out);
	if (ASSERT_OK_PTR(j, "valid JSON")) {
		const cJSON *root = cJSON_GetArrayItem(cJSON_GetObjectItem(
			cJSON_GetArrayItem(j, 0), "spans"), 0);
		const cJSON *kid = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "children"), 0);

		ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(kid, "name")), "epoch",
			     "child");
	}
	cJSON_Delete(j);
	free(out);
	spool_view__free(&v);
}

static void corrupt_inputs(void)
{
	static const struct {
		const char *name, *text, *why;
	} cases[] = {
		{ SID ".00000000.json", "", "empty file" },
		{ SID ".00000000.json", "{\"format\":\"cirron-spool/1\",\"spa", "not valid JSON" },
		{ SID ".00000000.json", "[1,2]\n", "not a JSON object" },
		{ SID ".00000000.json", "{\"format\":\"other/2\"}", "format is 'other/2'" },
		{ SID ".00000000.json", HEAD(0, true) "\"spans\":{}}", "'spans'" },
		{ SID ".00000000.json", HEAD(0, true) "\"spans\":[{\"span_id\":1}]}",
		  "span 0: missing or invalid 'parent_id'" },
		{ SID ".00000000.json", HEAD(0, true) "\"spans\":[" ROOT_OK ",{\"span_id\":2,"
		  "\"parent_id\":1,\"index\":null,\"start_ns\":1,\"end_ns\":null,\"status\":\"open\","
		  "\"attrs\":{},\"marks\":[]}]}", "span 1: missing or invalid 'name'" },
		{ SID ".00000005.json", HEAD(0, true) "\"spans\":[]}", "differs from the file name" },
		{ "notes.txt", "hello", "not a batch name" },
		{ SID ".00000000.json", HEAD(0, true) "\"spans\":[]} x", "text after" },
	};
	struct spool_src src = {};
	struct spool_view v = {};
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct batch b;

		why[0] = 0;
		ASSERT_EQ(batch__parse(&b, cases[i].name, cases[i].text, why, sizeof(why)), -EINVAL,
			  cases[i].why);
		ASSERT_HAS_SUBSTR(why, cases[i].why, "reason");
		ASSERT_NULL(b.json, "nothing kept");
		/* the same through a source: reported, counted, nothing indexed */
		if (spool_src__add_text(&src, cases[i].name, cases[i].text) == -ENOMEM)
			break;
	}
	ASSERT_OK(view__load_src(&v, &src), "index");
	ASSERT_EQ(v.nsessions, 0, "nothing merged");
	ASSERT_EQ(v.src.skipped, sizeof(cases) / sizeof(cases[0]), "each reported once");
	spool_view__free(&v);
}

#define SPAN(id, parent, name) "{\"span_id\":" #id ",\"parent_id\":" #parent ",\"name\":\"" \
	name "\",\"index\":null,\"start_ns\":" #id "000,\"end_ns\":null,\"status\":\"open\"," \
	"\"attrs\":{},\"marks\":[]}"

/* Found by fuzz_spool_reader: spans whose parent links form a loop were reached from no top,
 * so trace showed none of them. Each loop is cut once and every span is shown. */
static void parent_loops_shown(void)
{
	static const char *text = HEAD(0, true) "\"spans\":[" ROOT_OK ","
		SPAN(2, 3, "a") "," SPAN(3, 2, "b") "," SPAN(4, 4, "self") ","
		SPAN(5, 7, "x") "," SPAN(6, 5, "y") "," SPAN(7, 6, "z") "," SPAN(8, 6, "under-y")
		"]}";
	struct spool_view v = {};
	struct options o = opts();
	size_t tops, spans;
	char *out;

	load(&v, SID ".00000000.json", text, NULL);
	json_counts(&v, &tops, &spans);
	ASSERT_EQ(spans, 8, "every span reached once from the tops");
	ASSERT_EQ(tops, 4, "the root and one top per loop");
	out = print(&v, &o);
	for (const char *name = "a\0b\0self\0x\0y\0z\0under-y\0"; *name; name += strlen(name) + 1) {
		char line[64];

		snprintf(line, sizeof(line), "%s - ? (open)", name);
		ASSERT_HAS_SUBSTR(out, line, name);
	}
	free(out);
	spool_view__free(&v);
}

/* A span whose parent is in no batch (removed by --max-spool-mb, or lost) is shown at the
 * top, in every format. */
static void orphan_shown_at_top(void)
{
	static const char *text = HEAD(3, true) "\"spans\":[" ROOT_OK ","
		SPAN(9, 5, "step") "," SPAN(10, 9, "data_load") "]}";
	struct spool_view v = {};
	struct options o = opts();
	size_t tops, spans;
	char *out;

	load(&v, SID ".00000003.json", text, NULL);
	out = print(&v, &o);
	ASSERT_HAS_SUBSTR(out, "\nstep - ? (open)\n  data_load - ? (open)\n", "at the top");
	free(out);
	json_counts(&v, &tops, &spans);
	ASSERT_EQ(tops, 2, "two top spans in JSON");
	ASSERT_EQ(spans, 3, "and all three");
	spool_view__free(&v);
}

static char *health_text(struct spool_view *v)
{
	struct options o = opts();
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_OK_PTR(f, "open_memstream"))
		return NULL;
	health__print(f, v, &o);
	fclose(f);
	return buf;
}

static void health_spool_cap(void)
{
	static const char *capped = "{\"format\":\"cirron-spool/1\",\"session_id\":\"" SID "\","
		"\"pid\":42,\"rank\":0,\"local_rank\":0,\"world_size\":1,\"host\":\"vm\",\"seq\":7,"
		"\"written_ns\":1795423440200000000,\"final\":true,\"spans\":[],\"health\":{"
		"\"spool_bytes\":9000,\"spool_files\":7,\"spool_removed_files\":4,"
		"\"spool_removed_bytes\":5000,\"spool_max_bytes\":52428}}";
	struct spool_view v = {};
	char *buf;

	load(&v, SID ".00000007.json", capped, NULL);
	buf = health_text(&v);
	ASSERT_HAS_SUBSTR(buf, "  spool 9000 bytes in 7 files before this batch\n"
			  "  spool cap 52428 bytes (--max-spool-mb): 4 files, 5000 bytes removed, "
			  "oldest first\n", "cap line");
	free(buf);
	spool_view__free(&v);

	/* no cap: no line */
	load(&v, SID ".00000001.json", batch1, NULL);
	buf = health_text(&v);
	ASSERT_FALSE(buf && strstr(buf, "spool cap"), "no cap line without a cap");
	ASSERT_HAS_SUBSTR(buf, "  spool ? bytes in ? files before this batch\n", "older writer");
	free(buf);
	spool_view__free(&v);
}

/* health reads the newest batch only; an older one when the newest cannot be read. */
static void health_newest_readable(void)
{
	struct spool_view v = {};
	char *buf;

	load(&v, SID ".00000000.json", batch0, SID ".00000001.json", batch1_all_open,
	     SID ".00000002.json", "{\"format\":\"cirron-spool/1\",\"trunc", NULL);
	buf = health_text(&v);
	ASSERT_HAS_SUBSTR(buf, "  from batch 1 (the newest of 3 batch files)\n", "batch 1's");
	ASSERT_EQ(v.src.skipped, 1, "the bad one reported");
	ASSERT_EQ(v.src.sessions[0].files[0].state, SFILE_UNREAD, "batch 0 not read");
	free(buf);
	spool_view__free(&v);
}

static struct spool_view load_dir(const char *dir, int *err)
{
	struct spool_src src;
	struct spool_view v = {};

	*err = spool_src__open_dir(&src, dir);
	if (!*err)
		*err = view__load_src(&v, &src);
	else
		spool_src__free(&src);
	return v;
}

/* A batch listed, then removed by --max-spool-mb before it is read, is not an error. */
static void load_dir_file_gone(void)
{
	char dir[256], path[512];
	struct spool_view v;
	struct options o = opts();
	char *out;
	int err;

	if (!unit__mkdtemp(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/" SID ".00000001.json", dir);
	unit__write_file(path, batch1, strlen(batch1));
	snprintf(path, sizeof(path), "%s/" SID ".00000000.json", dir);
	/* a dangling link: listed, but open() finds nothing, as after a removal */
	ASSERT_OK(symlink("gone.json", path) ? -errno : 0, "symlink");
	v = load_dir(dir, &err);
	ASSERT_OK(err, "load");
	out = print(&v, &o);	/* reads every batch */
	free(out);
	ASSERT_EQ(v.src.skipped, 0, "not skipped as corrupt");
	ASSERT_EQ(v.src.removed, 1, "counted as removed");
	ASSERT_EQ(v.nsessions, 1, "the rest is read");
	spool_view__free(&v);
	unit__rm_rf(dir);
}

static void load_dir_skips(void)
{
	char dir[256], path[512];
	struct spool_view v;
	struct spool_src src;
	int err;

	if (!unit__mkdtemp(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/" SID ".00000000.json", dir);
	unit__write_file(path, batch0, strlen(batch0));
	snprintf(path, sizeof(path), "%s/" SID ".00000001.json", dir);
	unit__write_file(path, batch1, 20);	/* truncated */
	snprintf(path, sizeof(path), "%s/." SID ".00000002.tmp", dir);
	unit__write_file(path, "{", 1);		/* in progress: silent */
	v = load_dir(dir, &err);
	ASSERT_OK(err, "load");
	ASSERT_EQ(v.src.skipped, 1, "skipped");
	ASSERT_EQ(v.nsessions, 1, "the rest is read");
	spool_view__free(&v);
	snprintf(path, sizeof(path), "%s/none", dir);
	ASSERT_EQ(spool_src__open_dir(&src, path), -ENOENT, "missing dir");
	spool_src__free(&src);
	unit__rm_rf(dir);
}

/* A job's helper processes (role=helper, helper_of its pid) are listed under it, not as
 * sessions; a helper whose job is not in the spool stays a session. */
static void helpers_under_their_job(void)
{
#define HELPER(pid, of) "{\"format\":\"cirron-spool/1\",\"session_id\":\"vm-" #pid "-1\"," \
	"\"pid\":" #pid ",\"rank\":0,\"local_rank\":0,\"world_size\":1,\"host\":\"vm\"," \
	"\"seq\":0,\"written_ns\":1795423440200000000,\"final\":true,\"health\":{},\"spans\":[{\"span_id\":1," \
	"\"parent_id\":null,\"name\":\"cirron.session\",\"index\":null," \
	"\"start_ns\":1795423440500000000,\"end_ns\":1795423440600000000,\"status\":\"ok\"," \
	"\"attrs\":{\"role\":\"helper\",\"helper_of\":" #of ",\"helper\":\"inductor\"}," \
	"\"marks\":[]}]}\n"
	struct spool_view v = {};
	struct options o = opts();
	char *out;

	load(&v, SID ".00000001.json", batch1, "vm-50-1.00000000.json", HELPER(50, 42),
	     "vm-51-1.00000000.json", HELPER(51, 42), "vm-52-1.00000000.json", HELPER(52, 7),
	     NULL);
	out = print(&v, &o);
	if (ASSERT_OK_PTR(out, "printed")) {
		ASSERT_OK_PTR(strstr(out, "session " SID ":"), "the job");
		ASSERT_OK_PTR(strstr(out, "helpers: 2 (inductor), pids"), "its helpers");
		ASSERT_TRUE(strstr(out, "session vm-50-1") == NULL, "a helper is no session");
		ASSERT_OK_PTR(strstr(out, "session vm-52-1"), "a helper without its job is");
	}
	free(out);
	spool_view__free(&v);
#undef HELPER
}

int main(void)
{
	RUN_TEST(merge_later_batch_wins);
	RUN_TEST(merge_out_of_order);
	RUN_TEST(text_tree);
	RUN_TEST(helpers_under_their_job);
	RUN_TEST(open_path_first);
	RUN_TEST(elide_long_runs);
	RUN_TEST(csv_quoting);
	RUN_TEST(json_nested);
	RUN_TEST(corrupt_inputs);
	RUN_TEST(parent_loops_shown);
	RUN_TEST(orphan_shown_at_top);
	RUN_TEST(health_spool_cap);
	RUN_TEST(health_newest_readable);
	RUN_TEST(load_dir_file_gone);
	RUN_TEST(load_dir_skips);
	return unit__done();
}
