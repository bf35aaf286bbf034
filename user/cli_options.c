// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What `cirron-probe --help` and `cirron-probe COMMAND --help` print: the commands, their
// options, examples and exit codes. Parsing is in cli.c.
#include <argp.h>
#include "cli_options.h"

const char *argp_program_version = "cirron-probe " CIRRON_VERSION;
const char *argp_program_bug_address = "<https://github.com/cirron/cirron-probe/issues>";

#define EXIT_CODES_DOC \
	"Exit codes:\n" \
	"  0  success (run: the command's own exit status; 128+N if signal N killed it)\n" \
	"  1  runtime failure (BPF load or attach, lost target state, no syslog daemon)\n" \
	"  2  no such process\n" \
	"  3  no permission (needs root, or the capabilities of deploy/capabilities: doctor)\n" \
	"  4  the target maps no library that probes/ knows\n" \
	"  5  spool path cannot be created or written (or is not safe to write as root)\n" \
	"  6  the target exited while attaching\n" \
	"  7  trace, health, report: corrupt or foreign files in the spool were skipped\n" \
	"  8  trace, health, report: no spool to read (DIR/spool missing or unreadable)\n" \
	"  9  the kernel lacks what the BPF object needs (BTF, BPF ring buffer)\n" \
	"  10 the -o FILE cannot be written\n" \
	"  11 --metrics [ADDR:]PORT cannot be listened on (address in use, not local)\n" \
	"  64 usage error\n" \
	"  126, 127 run: the command cannot be executed, or is not found\n"

const char cli_top_doc[] =
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
	"  ship [DIR] --output  send a spool's batches not yet sent to s3:// and/or otlp, then exit\n"
	"  --help, --version    this text; the version\n"
	"\n"
	"Run 'cirron-probe COMMAND --help' for the options of a command, and\n"
	"'man cirron-probe' for all of them.\n"
	"\n"
	EXIT_CODES_DOC;

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
	  "and driver API): always (default): every call counted in BPF maps, exact totals " \
	  "on the session and every span, one uprobe hit per call, no event; off: none " \
	  "(synchronize, device count and NCCL stay)", 0 }

/* What attach, run and watch share. */
#define OBSERVE_OPTIONS \
	{ "output", 'o', "SINKS", 0, "Comma list of spool, stdout, log (syslog), " \
	  "s3://BUCKET/PREFIX (each spool batch also sent to PREFIX/HOST/, and its spans as " \
	  "otel_traces rows to PREFIX/spans/job=JOB/date=DATE/, by threads, retried while the " \
	  "spool keeps them; keys as the AWS tools read them), otlp[=URL] (closed spans to an " \
	  "OTLP/HTTP receiver: URL as OTEL_EXPORTER_OTLP_ENDPOINT, /v1/traces appended; the " \
	  "OTEL_EXPORTER_OTLP_* variables honoured); or none (default: spool)", 0 }, \
	{ "job", OPT_JOB, "JOB", 0, "The sessions' job, instead of the one their environment " \
	  "names (TORCHELASTIC_RUN_ID, SLURM_JOB_ID, CIRRON_RUN_ID, CIRRON_K8S_JOB, ...): " \
	  "A-Z a-z 0-9 . _ -, up to 127", 0 }, \
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
	  "Sampled windows (--python-frames sampled): one training step in " \
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
	  "prints), on the span open at the write, read by a hook on the write path attached " \
	  "while a process is traced (fentry on ksys_write, else a uprobe on the C library's " \
	  "write(), else the syscall tracepoint); off: none; uprobe: always the write() uprobe", \
	  0 }, \
	{ "marks-regex", OPT_MARKS_REGEX, "REGEX", 0, "Also marks from the named groups " \
	  "((?<name>...)) of this extended regular expression, per printed line", 0 }, \
	{ "metrics", OPT_METRICS, "[ADDR:]PORT", 0, "Serve Prometheus metrics at " \
	  "http://ADDR:PORT/metrics (IPv4; PORT or :PORT: on 127.0.0.1 only; 0.0.0.0:PORT for " \
	  "every address; port 0: any free one, printed on stderr); nothing listens without it", \
	  0 }, \
	{ "metrics-grace", OPT_METRICS_GRACE, "SEC", 0, "Keep the series of an ended session " \
	  "SEC seconds (default: 300)", 0 }, \
	{ "syslog-socket", OPT_SYSLOG_SOCKET, "PATH", 0, "With --output log: the syslog " \
	  "daemon's socket (default: /dev/log)", 0 }, \
	{ "sys-interval", OPT_SYS_INTERVAL, "SEC", 0, "Sample each traced process's CPU, memory, " \
	  "threads, I/O and context switches, and the node's network and disk bytes, from /proc " \
	  "every SEC seconds into the spool; 0: off (default: 1)", 0 }, \
	CUDA_CALLS_OPTION, \
	{ "snapshots", OPT_SNAPSHOTS, "MODE", 0, \
	  "Weights and gradients after each epoch's last optimizer step, read from the " \
	  "target's memory between two updates, without stopping it, for each model it trains " \
	  "(CPU tensors; CUDA ones are listed only): stats (default): per parameter mean, std, min, " \
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
	{ "user", OPT_RUN_USER, "USER", 0, "Run the command as USER (a name or a uid), with that "
	  "user's groups, HOME, USER and LOGNAME; needs root (sudo). Without it the command runs "
	  "as the observer's user; either way it gets none of the observer's capabilities", 0 },
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
	{ "path", 'd', "DIR", 0, "Spool root, as DIR, or s3://BUCKET/PREFIX: every host's " \
	  "batches stored there (default: ./.cirron)", 0 }, \
	{ "session", OPT_SESSION, "ID", 0, "Only this session", 0 }, \
	{ "rank", OPT_RANK, "N", 0, "Only sessions of this rank", 0 }

static const struct argp_option read_options[] = {
	READ_OPTIONS,
	{ "format", OPT_FORMAT, "FMT", 0, "text (default), json (nested), csv (one row per span) "
	  "or perfetto (Chrome Trace Event JSON for ui.perfetto.dev and chrome://tracing)", 0 },
	{ "name", OPT_NAME, "NAME", 0, "Only spans of this name, one line each", 0 },
	{ "last", OPT_LAST, "N", 0, "The N most recently ended spans, one line each", 0 },
	{ "all", OPT_ALL, NULL, 0, "Show every span: no eliding of long runs of siblings", 0 },
	{ "ranks", OPT_RANKS, NULL, 0, "The ranks of a distributed job side by side, one table per "
	  "job: step times, phase medians, the straggler and the phase that makes it slow, where "
	  "open ranks are", 0 },
	{ "job", OPT_JOB, "JOB", 0, "With --ranks: only this job; from s3://BUCKET/PREFIX, its "
	  "span rows (PREFIX/spans/job=JOB/) are read, nothing else", 0 },
	{ "out-file", 'o', "FILE", 0, "With --format perfetto: write to FILE (replaced whole, "
	  "atomically) instead of stdout", 0 },
	{},
};

static const struct argp_option health_options[] = {
	READ_OPTIONS,
	{ "format", OPT_FORMAT, "FMT", 0, "text (default: aligned columns, probe names demangled "
	  "and shortened) or json (each session's health block, probes with their whole "
	  "demangled name)", 0 },
	{},
};

static const struct argp_option ship_options[] = {
	{ "output", 'o', "DESTS", 0, "Comma list of s3://BUCKET/PREFIX (batch files to PREFIX/HOST/, "
	  "span rows to PREFIX/spans/job=JOB/date=DATE/) and otlp[=URL] (spans to an OTLP/HTTP "
	  "receiver; the OTEL_EXPORTER_OTLP_* variables honoured)", 0 },
	{ "path", 'd', "DIR", 0, "Spool root (default: ./.cirron)", 0 },
	{ "duration", OPT_DURATION, "SEC", 0, "Give up after SEC seconds (default: when all is "
	  "sent, retrying while a destination is down)", 0 },
	VERBOSE_OPTION,
	{},
};

static const struct argp_option report_options[] = {
	READ_OPTIONS,
	{ "out-file", 'o', "FILE", 0, "Write the page to FILE (default: ./report.html), replaced "
	  "whole, atomically", 0 },
	{},
};

const struct cli_command cli_commands[] = {
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
	  "Examples: cirron-probe run --output stdout -- python3 train.py --epochs 2; "
	  "sudo cirron-probe run --user alice -- python3 train.py\n\n"
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
	  "cirron-probe trace --format perfetto -o trace.json; "
	  "cirron-probe trace --ranks s3://traces/job-7\n\n"
	  "Exit codes: 0 success (an empty spool too); 1 runtime failure; 7 corrupt or foreign "
	  "spool files (or s3 objects) skipped (the rest is shown); 8 no spool (or the bucket "
	  "cannot be listed); 10 -o FILE cannot be written; 64 usage error (a bad s3:// URL, no "
	  "keys for it).", read_options },
	{ "health", CMD_HEALTH, "Show each spooled session's observer health from its newest "
	  "batch: ring buffer drops, events, probes attached and failed, uprobe hits, spool "
	  "size, and hits per probe (C++ names demangled, in aligned columns). Writes nothing.\v"
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
	{ "ship", CMD_SHIP, "Send the batches of the spool under DIR (default ./.cirron) that the "
	  "destinations have not taken yet, as attach, run and watch do with the same --output "
	  "(their state logs under DIR say what was sent: nothing twice), then exit: a node's "
	  "spool written without --output, or one left behind when its agent stopped. Ctrl-C "
	  "stops it; what is left is sent by the next ship or start.\v"
	  "Example: cirron-probe ship /var/lib/cirron-probe --output s3://traces/fleet,otlp\n\n"
	  "Exit codes: 0 everything sent; 1 something left (said on stderr); 5 the spool cannot be "
	  "opened; 64 usage error.", ship_options },
};

const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);
