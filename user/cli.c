// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <argp.h>
#include <regex.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "tree/marks.h"
#include "sink/metrics.h"

const char *argp_program_version = "cirron-probe " CIRRON_VERSION;
const char *argp_program_bug_address = "<https://github.com/cirron/cirron-probe/issues>";

#define EXIT_CODES_DOC \
	"Exit codes:\n" \
	"  0  success (run: the command's own exit status; 128+N if signal N killed it)\n" \
	"  1  runtime failure (BPF load or attach, lost target state, no syslog daemon)\n" \
	"  2  no such process\n" \
	"  3  no permission (needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)\n" \
	"  4  the target maps no library that probes/ knows\n" \
	"  5  spool path cannot be created or written (or is not safe to write as root)\n" \
	"  6  the target exited while attaching\n" \
	"  7  trace, health, report: corrupt or foreign files in the spool were skipped\n" \
	"  8  trace, health, report: no spool to read (DIR/spool missing or unreadable)\n" \
	"  9  the kernel lacks what the BPF object needs (BTF, BPF ring buffer)\n" \
	"  10 the -o FILE cannot be written\n" \
	"  11 --metrics ADDR:PORT cannot be listened on (address in use, not local)\n" \
	"  64 usage error\n" \
	"  126, 127 run: the command cannot be executed, or is not found\n"

static const char top_doc[] =
	"Observe a running PyTorch/CUDA process with BPF uprobes, without changing or restarting it.\n"
	"\n"
	"USAGE: cirron-probe COMMAND [OPTIONS]\n"
	"\n"
	"Commands:\n"
	"  attach -p PID        trace a running process (and the processes under it)\n"
	"  run [OPTS] -- CMD... start CMD and trace it (and the processes it execs) from the start\n"
	"  watch                node agent: trace every process that loads torch or the CUDA\n"
	"                       runtime, now or later, until stopped\n"
	"  doctor -p PID        show what was found in the target and which probes resolve\n"
	"  trace [DIR]          show the spans spooled under DIR (default ./.cirron)\n"
	"  health [DIR]         show the observer's health (drops, probes, hits) per session\n"
	"  report [DIR]         write the spool as one HTML page (-o FILE, default report.html)\n"
	"  --help, --version    this text; the version\n"
	"\n"
	"Run 'cirron-probe COMMAND --help' for the options of a command, and\n"
	"'man cirron-probe' for all of them.\n"
	"\n"
	EXIT_CODES_DOC;

enum {
	OPT_FLUSH = 1000,
	OPT_DURATION,
	OPT_CUDA_DETAIL,
	OPT_CACHE_DIR,
	OPT_EPOCH_STEPS,
	OPT_PYTHON_FRAMES,
	OPT_SAMPLE_EVERY,
	OPT_HANG_FACTOR,
	OPT_HANG_MIN,
	OPT_RINGBUF_KB,
	OPT_FORMAT,
	OPT_NAME,
	OPT_LAST,
	OPT_SESSION,
	OPT_RANK,
	OPT_ALL,
	OPT_RANKS,
	OPT_MAX_SPOOL_MB,
	OPT_MATCH,
	OPT_MARKS,
	OPT_MARKS_REGEX,
	OPT_METRICS,
	OPT_METRICS_GRACE,
	OPT_SYSLOG_SOCKET,
	OPT_SYS_INTERVAL,
	OPT_CUDA_CALLS,
	OPT_SNAPSHOTS,
	OPT_SAMPLE_RATE,
	OPT_SNAPSHOT_MAX_MB,
};

/* Options doctor shares with attach, run and watch: what decides which probes resolve. */
#define CACHE_DIR_OPTION \
	{ "cache-dir", OPT_CACHE_DIR, "DIR", 0, \
	  "Symbol cache (default: $XDG_CACHE_HOME or ~/.cache, /cirron-probe)", 0 }
#define VERBOSE_OPTION \
	{ "verbose", 'v', NULL, 0, "More messages on stderr (twice for debug)", 0 }
#define PYTHON_FRAMES_OPTION \
	{ "python-frames", OPT_PYTHON_FRAMES, "LEVEL", 0, \
	  "off (default): forward inferred from the torch anchors, ~10 uprobe hits per step; " \
	  "always: exact forward spans (the outermost module call) from CPython's slot_tp_call, " \
	  "2 more hits per Python-level object call (CPython 3.10-3.13); " \
	  "sampled: as always during one training step in every --sample-every, off between", 0 }
#define CUDA_CALLS_OPTION \
	{ "cuda-calls", OPT_CUDA_CALLS, "LEVEL", 0, \
	  "Per-call CUDA probes (kernel launches, memcpy, malloc/free, graph launches; runtime " \
	  "and driver API): sampled (default): attached during one training step in every " \
	  "--sample-every (at most one window a second; 20 ms windows for processes without " \
	  "torch steps), totals scaled to the whole run as cuda.*_est; always: every call, exact " \
	  "totals (implied by --cuda-detail); off: none (synchronize and device count stay)", 0 }

/* What attach, run and watch share. */
#define OBSERVE_OPTIONS \
	{ "output", 'o', "SINKS", 0, "Comma list of spool, stdout, log (syslog); or none " \
	  "(default: spool)", 0 }, \
	{ "path", 'd', "DIR", 0, "Spool root; batches go to DIR/spool (default: ./.cirron)", 0 }, \
	{ "flush-interval", OPT_FLUSH, "SEC", 0, "Seconds between spool batches (default: 1)", 0 }, \
	{ "duration", OPT_DURATION, "SEC", 0, "Detach after SEC seconds (default: until the " \
	  "targets exit; watch: until stopped)", 0 }, \
	{ "max-spool-mb", OPT_MAX_SPOOL_MB, "MB", 0, \
	  "Keep the spool's batch files under MB MiB (fractions allowed: 0.5), removing the oldest " \
	  "first, earlier runs' included; each session's newest batch is kept, and carries every " \
	  "open span; needs the spool output (default: no cap)", 0 }, \
	{ "cuda-detail", OPT_CUDA_DETAIL, NULL, 0, "One event per CUDA call, kept as marks on the " \
	  "session span, instead of counters only (implies --cuda-calls always)", 0 }, \
	{ "epoch-steps", OPT_EPOCH_STEPS, "N", 0, \
	  "Without DataLoader epoch boundaries, a new epoch every N optimizer steps (default: 1000)", \
	  0 }, \
	PYTHON_FRAMES_OPTION, \
	{ "sample-every", OPT_SAMPLE_EVERY, "N", 0, \
	  "Sampled windows (--python-frames sampled, --cuda-calls sampled): one training step in " \
	  "every N, at most one window a second (default: 100)", 0 }, \
	{ "hang-factor", OPT_HANG_FACTOR, "F", 0, \
	  "Warn (stderr, and a hang record in the spool) when a span has been open F times longer " \
	  "than its name's median and --hang-min; 0: off (default: 10)", 0 }, \
	{ "hang-min", OPT_HANG_MIN, "SEC", 0, "Never call a span open less than SEC hung " \
	  "(default: 5)", 0 }, \
	{ "ringbuf-kb", OPT_RINGBUF_KB, "KB", 0, "Events ring buffer size, a power of two from 16 " \
	  "to 4194304 (default: 8192); events past it are dropped and counted", 0 }, \
	CACHE_DIR_OPTION, \
	VERBOSE_OPTION, \
	{ "marks", OPT_MARKS, "MODE", 0, "on (default): marks from the numbers the job prints to " \
	  "its stdout and stderr (HF Trainer dicts, key: value and key=value progress, plain " \
	  "prints), on the span open at the write, read at the write syscall (one event per " \
	  "write); off: none; uprobe: the same from a uprobe on the C library's write() (for " \
	  "bench/mark_cost.sh)", 0 }, \
	{ "marks-regex", OPT_MARKS_REGEX, "REGEX", 0, "Also marks from the named groups " \
	  "((?<name>...)) of this extended regular expression, per printed line", 0 }, \
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0, "Serve Prometheus metrics at " \
	  "http://ADDR:PORT/metrics (IPv4; port 0: any free one, printed on stderr); nothing " \
	  "listens without it", 0 }, \
	{ "metrics-grace", OPT_METRICS_GRACE, "SEC", 0, "Keep the series of an ended session " \
	  "SEC seconds (default: 300)", 0 }, \
	{ "syslog-socket", OPT_SYSLOG_SOCKET, "PATH", 0, "With --output log: the syslog " \
	  "daemon's socket (default: /dev/log)", 0 }, \
	{ "sys-interval", OPT_SYS_INTERVAL, "SEC", 0, "Sample each traced process's CPU, memory, " \
	  "threads, I/O and context switches, and the node's network and disk bytes, from /proc " \
	  "every SEC seconds into the spool; 0: off (default: 1)", 0 }, \
	CUDA_CALLS_OPTION, \
	{ "snapshots", OPT_SNAPSHOTS, "MODE", 0, \
	  "Weights and gradients at each epoch's end, read from the target's memory (CPU " \
	  "tensors; CUDA ones are listed only): stats (default): per parameter mean, std, min, " \
	  "max, norm and a 16-bin histogram into the spool; sampled: also --sample-rate of each " \
	  "tensor's elements, full: also every element, as safetensors files under " \
	  "DIR/snapshots/<epoch span id>/; off: none", 0 }, \
	{ "sample-rate", OPT_SAMPLE_RATE, "R", 0, "--snapshots sampled: the fraction of each " \
	  "tensor's elements written, in evenly spaced blocks (default: 0.01)", 0 }, \
	{ "snapshot-max-mb", OPT_SNAPSHOT_MAX_MB, "MB", 0, "Read at most MB MiB of target memory " \
	  "per snapshot; beyond it the stats cover an evenly spaced sample of every tensor and " \
	  "say so (default: 256)", 0 }

static const struct argp_option attach_options[] = {
	{ "pid", 'p', "PID", 0, "Process to trace, with the processes under it (a launcher's "
	  "workers); required", 0 },
	OBSERVE_OPTIONS,
	{},
};

static const struct argp_option run_options[] = {
	/* refused with a message of its own (ARGP_KEY_END): run starts its command */
	{ "pid", 'p', "PID", OPTION_HIDDEN, NULL, 0 },
	OBSERVE_OPTIONS,
	{},
};

static const struct argp_option watch_options[] = {
	{ "match", OPT_MATCH, "REGEX", 0, "Only processes whose command line (arguments joined by "
	  "spaces) matches this extended regular expression (default: all)", 0 },
	OBSERVE_OPTIONS,
	{},
};

static const struct argp_option doctor_options[] = {
	{ "pid", 'p', "PID", 0, "Process to examine; required", 0 },
	CACHE_DIR_OPTION,
	VERBOSE_OPTION,
	PYTHON_FRAMES_OPTION,
	CUDA_CALLS_OPTION,
	{},
};

#define READ_OPTIONS \
	{ "path", 'd', "DIR", 0, "Spool root, as DIR (default: ./.cirron)", 0 }, \
	{ "session", OPT_SESSION, "ID", 0, "Only this session", 0 }, \
	{ "rank", OPT_RANK, "N", 0, "Only sessions of this rank", 0 }

static const struct argp_option read_options[] = {
	READ_OPTIONS,
	{ "format", OPT_FORMAT, "FMT", 0, "text (default), json (nested), csv (one row per span) "
	  "or perfetto (Chrome Trace Event JSON for ui.perfetto.dev and chrome://tracing)", 0 },
	{ "name", OPT_NAME, "NAME", 0, "Only spans of this name, one line each", 0 },
	{ "last", OPT_LAST, "N", 0, "The N most recently ended spans, one line each", 0 },
	{ "all", OPT_ALL, NULL, 0, "Show every span: no eliding of long runs of siblings", 0 },
	{ "ranks", OPT_RANKS, NULL, 0, "The ranks of a distributed job side by side: step times, "
	  "phase medians, the straggler and the phase that makes it slow, where open ranks are", 0 },
	{ "out-file", 'o', "FILE", 0, "With --format perfetto: write to FILE (replaced whole, "
	  "atomically) instead of stdout", 0 },
	{},
};

static const struct argp_option health_options[] = {
	READ_OPTIONS,
	{},
};

static const struct argp_option report_options[] = {
	READ_OPTIONS,
	{ "out-file", 'o', "FILE", 0, "Write the page to FILE (default: ./report.html), replaced "
	  "whole, atomically", 0 },
	{},
};

static int parse_seconds(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !(*out > 0 && *out <= 1e7))	/* NaN too */
		return -EINVAL;
	return 0;
}

/* MiB, fractions allowed, at least one byte and at most 1 PiB. */
static int parse_mib(const char *arg, uint64_t *bytes)
{
	char *end;
	double mib;

	errno = 0;
	mib = strtod(arg, &end);
	if (errno || end == arg || *end || !(mib * 1048576 >= 1 && mib <= 1073741824))
		return -EINVAL;
	*bytes = (uint64_t)(mib * 1048576);
	return 0;
}

int cli__parse_sinks(const char *arg, unsigned int *sinks)
{
	char buf[128], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf) || !*arg)
		return -EINVAL;
	strcpy(buf, arg);
	*sinks = 0;
	if (!strcmp(buf, "none"))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "spool"))
			*sinks |= SINK_SPOOL;
		else if (!strcmp(tok, "stdout"))
			*sinks |= SINK_STDOUT;
		else if (!strcmp(tok, "log"))
			*sinks |= SINK_LOG;
		else
			return -EINVAL;
	}
	return *sinks ? 0 : -EINVAL;
}

/* A usage error is one line, like every error (docs/usage.md); argp_error would add a second,
 * wrapped "Try ... --help" line. Exits with EXIT_USAGE, as argp_error does. */
static void __attribute__((format(printf, 2, 3), noreturn))
usage_error(const struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);	/* NOLINT(clang-analyzer-valist.Uninitialized): false positive */
	va_end(ap);
	fputs(" (try --help)\n", stderr);
	exit(EXIT_USAGE);
}

static long parse_count(const struct argp_state *state, const char *what, const char *arg,
			long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min)
		usage_error(state, "invalid %s: %s", what, arg);
	return v;
}

static bool reads_spool(enum command cmd)
{
	return cmd == CMD_TRACE || cmd == CMD_HEALTH || cmd == CMD_REPORT;
}

static bool cuda_calls_set;	/* --cuda-calls was given */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	char *end;
	long v;

	switch (key) {
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			o->format = FORMAT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = FORMAT_JSON;
		else if (!strcmp(arg, "csv"))
			o->format = FORMAT_CSV;
		else if (!strcmp(arg, "perfetto"))
			o->format = FORMAT_PERFETTO;
		else
			usage_error(state, "invalid --format '%s': use text, json, csv or perfetto",
				    arg);
		break;
	case OPT_NAME:
		o->name = arg;
		break;
	case OPT_LAST:
		o->last = parse_count(state, "--last", arg, 1);
		break;
	case OPT_SESSION:
		o->session = arg;
		break;
	case OPT_RANK:
		o->rank = parse_count(state, "--rank", arg, 0);
		break;
	case OPT_RANKS:
		o->ranks = true;
		break;
	case OPT_ALL:
		o->all = true;
		break;
	case 'p':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff)
			usage_error(state, "invalid PID: %s", arg);
		o->pid = (int)v;
		break;
	case 'o':
		if (reads_spool(o->cmd)) {
			if (!*arg)
				usage_error(state, "empty -o FILE");
			o->out_file = arg;
			break;
		}
		if (cli__parse_sinks(arg, &o->sinks))
			usage_error(state, "invalid --output '%s': use spool, stdout, log, "
				   "comma-separated, or none", arg);
		break;
	case 'd':
		if (!*arg)
			usage_error(state, "empty --path");
		o->path = arg;
		break;
	case OPT_FLUSH:
		if (parse_seconds(arg, &o->flush_interval_s))
			usage_error(state, "invalid --flush-interval: %s", arg);
		break;
	case OPT_DURATION:
		if (parse_seconds(arg, &o->duration_s))
			usage_error(state, "invalid --duration: %s", arg);
		break;
	case OPT_MAX_SPOOL_MB:
		if (parse_mib(arg, &o->max_spool_bytes))
			usage_error(state, "invalid --max-spool-mb: %s", arg);
		break;
	case OPT_CUDA_DETAIL:
		o->cuda_detail = true;
		break;
	case OPT_EPOCH_STEPS:
		o->epoch_steps = parse_count(state, "--epoch-steps", arg, 1);
		break;
	case OPT_PYTHON_FRAMES:
		if (!strcmp(arg, "off"))
			o->python_frames = PYF_OFF;
		else if (!strcmp(arg, "always"))
			o->python_frames = PYF_ALWAYS;
		else if (!strcmp(arg, "sampled"))
			o->python_frames = PYF_SAMPLED;
		else
			usage_error(state, "invalid --python-frames '%s': use off, sampled or always",
				    arg);
		break;
	case OPT_HANG_FACTOR:
		if (!strcmp(arg, "0"))
			o->hang_factor = 0;
		else if (parse_seconds(arg, &o->hang_factor))	/* a positive number */
			usage_error(state, "invalid --hang-factor: %s (a number, 0 for off)", arg);
		break;
	case OPT_HANG_MIN:
		if (parse_seconds(arg, &o->hang_min_s))
			usage_error(state, "invalid --hang-min: %s", arg);
		break;
	case OPT_RINGBUF_KB:
		o->ringbuf_kb = parse_count(state, "--ringbuf-kb", arg, 16);
		if (o->ringbuf_kb & (o->ringbuf_kb - 1) || o->ringbuf_kb > (1L << 22))
			usage_error(state, "invalid --ringbuf-kb: %s (a power of two, 16 to 4194304)",
				    arg);
		break;
	case OPT_SAMPLE_EVERY:
		o->sample_every = parse_count(state, "--sample-every", arg, 1);
		break;
	case OPT_CACHE_DIR:
		o->cache_dir = arg;
		break;
	case OPT_MARKS:
		if (!strcmp(arg, "on"))
			o->marks = MARKS_ON;
		else if (!strcmp(arg, "off"))
			o->marks = MARKS_OFF;
		else if (!strcmp(arg, "uprobe"))	/* the measured alternative (bench/) */
			o->marks = MARKS_UPROBE;
		else
			usage_error(state, "invalid --marks: %s (on or off)", arg);
		break;
	case OPT_MARKS_REGEX: {
		struct marks_regex rx;
		char why[128];

		if (marks_regex__compile(&rx, arg, why, sizeof(why)))
			usage_error(state, "invalid --marks-regex '%s': %s", arg, why);
		marks_regex__free(&rx);
		o->marks_regex = arg;
		break;
	}
	case OPT_MATCH: {
		regex_t rx;
		int rc = regcomp(&rx, arg, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char why[128];

			regerror(rc, &rx, why, sizeof(why));
			usage_error(state, "invalid --match '%s': %s", arg, why);
		}
		regfree(&rx);
		o->match = arg;
		break;
	}
	case OPT_CUDA_CALLS:
		if (!strcmp(arg, "off"))
			o->cuda_calls = CUDA_CALLS_OFF;
		else if (!strcmp(arg, "always"))
			o->cuda_calls = CUDA_CALLS_ALWAYS;
		else if (!strcmp(arg, "sampled"))
			o->cuda_calls = CUDA_CALLS_SAMPLED;
		else
			usage_error(state, "invalid --cuda-calls '%s': use off, sampled or always",
				    arg);
		cuda_calls_set = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case OPT_METRICS:
		if (metrics__parse_addr(arg, &o->metrics_ip, &o->metrics_port))
			usage_error(state, "invalid --metrics '%s': use ADDR:PORT, an IPv4 address "
				    "and a port (127.0.0.1:9464)", arg);
		o->metrics_addr = arg;
		break;
	case OPT_SNAPSHOTS:
		if (!strcmp(arg, "off"))
			o->snapshots = SNAP_OFF;
		else if (!strcmp(arg, "stats"))
			o->snapshots = SNAP_STATS;
		else if (!strcmp(arg, "sampled"))
			o->snapshots = SNAP_SAMPLED;
		else if (!strcmp(arg, "full"))
			o->snapshots = SNAP_FULL;
		else
			usage_error(state, "invalid --snapshots '%s': use stats, sampled, full or off",
				    arg);
		break;
	case OPT_SAMPLE_RATE: {
		char *end;

		errno = 0;
		o->sample_rate = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->sample_rate > 0 && o->sample_rate <= 1))
			usage_error(state, "invalid --sample-rate: %s (a fraction, 0 < R <= 1)", arg);
		break;
	}
	case OPT_SNAPSHOT_MAX_MB:
		if (parse_mib(arg, &o->snapshot_max_bytes))
			usage_error(state, "invalid --snapshot-max-mb: %s", arg);
		break;
	case OPT_SYS_INTERVAL:
		if (!strcmp(arg, "0"))
			o->sys_interval_s = 0;
		else if (parse_seconds(arg, &o->sys_interval_s))
			usage_error(state, "invalid --sys-interval: %s (seconds, 0 for off)", arg);
		break;
	case OPT_SYSLOG_SOCKET:
		if (!*arg)
			usage_error(state, "empty --syslog-socket");
		o->syslog_socket = arg;
		break;
	case OPT_METRICS_GRACE:
		if (!strcmp(arg, "0"))
			o->metrics_grace_s = 0;
		else if (parse_seconds(arg, &o->metrics_grace_s))
			usage_error(state, "invalid --metrics-grace: %s", arg);
		break;
	case ARGP_KEY_ARG:
		if (reads_spool(o->cmd) && state->arg_num == 0 && *arg) {
			o->path = arg;	/* trace [DIR] */
			break;
		}
		if (o->cmd != CMD_RUN)
			usage_error(state, "unexpected argument: %s", arg);
		o->run_argv = &state->argv[state->next - 1];
		state->next = state->argc;	/* the rest belongs to the command */
		break;
	case ARGP_KEY_END:
		if ((o->cmd == CMD_ATTACH || o->cmd == CMD_DOCTOR) && !o->pid)
			usage_error(state, "-p PID is required");
		if (o->cmd == CMD_RUN && o->pid)
			usage_error(state, "run takes a command, not -p");
		if (o->cmd == CMD_RUN && !o->run_argv)
			usage_error(state, "run needs a command: cirron-probe run -- CMD ARGS...");
		if (o->max_spool_bytes && !(o->sinks & SINK_SPOOL))
			usage_error(state, "--max-spool-mb needs the spool output");
		if (o->metrics_addr && o->cmd == CMD_DOCTOR)
			usage_error(state, "--metrics is for attach, run and watch");
		if (o->out_file && o->cmd == CMD_TRACE && o->format != FORMAT_PERFETTO)
			usage_error(state, "-o FILE is for --format perfetto");
		if (o->format == FORMAT_PERFETTO && (o->name || o->last || o->all))
			usage_error(state, "--format perfetto exports whole sessions: no --name, "
				    "--last or --all");
		if (o->cuda_detail && cuda_calls_set && o->cuda_calls != CUDA_CALLS_ALWAYS)
			usage_error(state, "--cuda-detail sees every CUDA call: it needs "
				    "--cuda-calls always (its default)");
		if (o->cuda_detail)
			o->cuda_calls = CUDA_CALLS_ALWAYS;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct {
	const char *name;
	enum command cmd;
	const char *doc;
	const struct argp_option *options;
} commands[] = {
	{ "attach", CMD_ATTACH, "Trace a running process and the processes under it (a "
	  "launcher's workers), from now until they exit, SIGINT or SIGTERM, or --duration.\v"
	  "Example: cirron-probe attach -p 4242 --output spool,stdout --duration 60\n\n"
	  "Exit codes: 0 detached or the targets exited; 1 runtime failure; 2 no such process; "
	  "3 no permission; 4 no known library mapped; 5 spool not writable; 6 the target exited "
	  "while attaching; 9 kernel lacks BTF or the BPF ring buffer; 11 --metrics cannot listen; "
	  "64 usage error.", attach_options },
	{ "run", CMD_RUN, "Start a command and trace it from its start, with the processes it "
	  "forks and execs (each traced process is its own session). It is held at exec and at "
	  "each library load until its probes are in.\v"
	  "Example: cirron-probe run --output stdout -- python3 train.py --epochs 2\n\n"
	  "Exit codes: the command's own exit status (128+N if signal N killed it; 127 not "
	  "found, 126 not executable); before it starts: 1, 3, 5, 9, 11 as for attach; 64 usage "
	  "error.", run_options },
	{ "watch", CMD_WATCH, "Node agent: runs until stopped (SIGINT, SIGTERM) and traces every "
	  "process that maps torch's libraries, the CUDA runtime or NCCL, those running when it "
	  "starts and those that load them later, each until it exits. Discovery is event-driven "
	  "(a uprobe on each dynamic linker's _dl_debug_state, in every process); a process that "
	  "loads none of them costs a few uprobe hits, at its start and at each dlopen. A process seen again after a "
	  "restart of the agent gets a new session.\v"
	  "Example: cirron-probe watch --path /var/lib/cirron-probe --max-spool-mb 2048 "
	  "--match 'train|torchrun'\n\n"
	  "Exit codes: 0 stopped by SIGINT, SIGTERM or --duration; 1 runtime failure; 3 no "
	  "permission; 5 spool not writable; 9 kernel lacks BTF or the BPF ring buffer; 11 "
	  "--metrics cannot listen; 64 usage error.", watch_options },
	{ "doctor", CMD_DOCTOR, "Show the target's libraries, which probe groups match, and which "
	  "symbols resolve (and why not), and what this machine's kernel offers. Attaches "
	  "nothing.\v"
	  "Example: cirron-probe doctor -p 4242 --python-frames always\n\n"
	  "Exit codes: 0 attachable; 1 runtime failure; 2 no such process; 3 no permission to "
	  "read it; 4 no known library mapped; 6 the target exited meanwhile; 64 usage error.",
	  doctor_options },
	{ "trace", CMD_TRACE, "Show the spans spooled under DIR (default ./.cirron): one tree per "
	  "session, newest first; open and incomplete spans first as an 'open path'. Writes "
	  "nothing but -o FILE.\v"
	  "Examples: cirron-probe trace; cirron-probe trace --name step; "
	  "cirron-probe trace --format csv > spans.csv; "
	  "cirron-probe trace --format perfetto -o trace.json\n\n"
	  "Exit codes: 0 success (an empty spool too); 1 runtime failure; 7 corrupt or foreign "
	  "spool files skipped (the rest is shown); 8 no spool; 10 -o FILE cannot be written; 64 "
	  "usage error.", read_options },
	{ "health", CMD_HEALTH, "Show each spooled session's observer health from its newest "
	  "batch: ring buffer drops, events, probes attached and failed, uprobe hits, spool "
	  "size, and hits per probe. Writes nothing.\v"
	  "Exit codes: 0 success; 1 runtime failure; 7 corrupt or foreign spool files skipped; 8 "
	  "no spool; 64 usage error.", health_options },
	{ "report", CMD_REPORT, "Write the spool under DIR (default ./.cirron) as one "
	  "self-contained HTML page (no network): per rank, step time over the steps, phases per "
	  "step, data-load stall share, numeric marks, weight norms, hangs, attributes and health, "
	  "and the trace --ranks findings. Long runs are drawn downsampled, and the page says "
	  "so.\v"
	  "Example: cirron-probe report /var/lib/cirron-probe -o job.html\n\n"
	  "Exit codes: 0 success; 1 runtime failure; 7 corrupt or foreign spool files skipped; 8 "
	  "no spool; 10 -o FILE cannot be written; 64 usage error.", report_options },
};

int cli__parse(int argc, char **argv, struct options *o)
{
	struct argp argp = { .parser = parse_opt };
	char prog[32], *cmd_arg;
	size_t i;
	int err;

	cuda_calls_set = false;
	*o = (struct options){ .sinks = SINK_SPOOL, .path = "./.cirron", .flush_interval_s = 1.0,
				  .epoch_steps = 1000, .sample_every = 100,
				  .hang_factor = 10, .hang_min_s = 5, .ringbuf_kb = 8192, .rank = -1,
				  .metrics_grace_s = 300, .sys_interval_s = 1,
				  .snapshots = SNAP_STATS, .sample_rate = 0.01,
				  .snapshot_max_bytes = 256ull << 20,
				  .syslog_socket = "/dev/log" };
	if (argc < 2) {
		fputs(top_doc, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(top_doc, stdout);
		return -1;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		return -1;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		o->cmd = commands[i].cmd;
		argp.doc = commands[i].doc;
		argp.options = commands[i].options;
		argp.args_doc = o->cmd == CMD_RUN ? "-- CMD [ARGS...]" :
				reads_spool(o->cmd) ? "[DIR]" : NULL;
		/* argp names the program after the argv[0] it parses (our argv[1]): make that
		 * "cirron-probe attach", so messages read "cirron-probe attach: ..." */
		snprintf(prog, sizeof(prog), "cirron-probe %s", commands[i].name);
		cmd_arg = argv[1];
		argv[1] = prog;
		err = argp_parse(&argp, argc - 1, argv + 1, ARGP_IN_ORDER, NULL, o);
		argv[1] = cmd_arg;
		if (err)
			return EXIT_USAGE;
		log_verbosity = o->verbose;
		return 0;
	}
	elog("unknown command '%s' (try --help)", argv[1]);
	return EXIT_USAGE;
}
