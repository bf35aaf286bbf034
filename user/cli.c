// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <argp.h>
#include <arpa/inet.h>
#include <pwd.h>
#include <regex.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_options.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/s3.h"
#include "marks/marks.h"
#include "proc/job_id.h"
#include "ship/otlp_config.h"
#include "sink/metrics.h"

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

/* --output: cli__parse_sinks's words, and s3://BUCKET/PREFIX, which brings the spool (the
 * upload's buffer) with it. */
static void parse_output(const struct argp_state *state, struct options *o, const char *arg)
{
	static char s3_url[1200];
	char rest[128] = "", why[160];
	const char *p = arg;

	o->s3_url = NULL;
	o->otlp_url = NULL;
	while (*p) {
		size_t len = strcspn(p, ",");

		if ((len == 4 && !strncmp(p, "otlp", 4)) || !strncmp(p, "otlp=", 5)) {
			static char otlp_url[1200];

			if (len >= sizeof(otlp_url))
				usage_error(state, "invalid --output: otlp URL too long");
			if (o->otlp_url)
				usage_error(state, "invalid --output: one otlp destination at most");
			snprintf(otlp_url, sizeof(otlp_url), "%.*s", len > 5 ? (int)(len - 5) : 0,
				 p + 5);
			if (len == 5)
				usage_error(state, "invalid --output '%s': otlp=URL needs a URL", arg);
			if (*otlp_url && otlp_config__check_url(otlp_url, why, sizeof(why)))
				usage_error(state, "invalid --output '%s': %s", otlp_url, why);
			o->otlp_url = otlp_url;
		} else if (!strncmp(p, "s3://", 5)) {
			struct s3_url u;

			if (len >= sizeof(s3_url))
				usage_error(state, "invalid --output: s3 URL too long");
			snprintf(s3_url, sizeof(s3_url), "%.*s", (int)len, p);
			if (s3__parse_url(s3_url, &u, why, sizeof(why)))
				usage_error(state, "invalid --output '%s': %s", s3_url, why);
			if (o->s3_url)
				usage_error(state, "invalid --output: one s3:// destination at most");
			o->s3_url = s3_url;
		} else if (strlen(rest) + len + 2 < sizeof(rest)) {
			snprintf(rest + strlen(rest), sizeof(rest) - strlen(rest), "%s%.*s",
				 *rest ? "," : "", (int)len, p);
		} else {
			usage_error(state, "invalid --output '%s'", arg);
		}
		p += len;
		if (*p == ',' && p[1])
			p++;
		else if (*p == ',')
			usage_error(state, "invalid --output '%s'", arg);
	}
	if ((o->s3_url || o->otlp_url) && !strcmp(rest, "none"))
		usage_error(state, "invalid --output '%s': %s sends from the spool: not with none",
			    arg, o->s3_url ? "s3://" : "otlp");
	if (!*rest && (o->s3_url || o->otlp_url))
		o->sinks = SINK_SPOOL;
	else if (cli__parse_sinks(rest, &o->sinks))
		usage_error(state, "invalid --output '%s': use spool, stdout, log, s3://BUCKET/PREFIX, "
			    "otlp[=URL], comma-separated, or none", arg);
	if (o->s3_url || o->otlp_url)
		o->sinks |= SINK_SPOOL;
}

/* The OTLP destination from --output and the OTEL_EXPORTER_OTLP_* variables: a usage error
 * when they make no sense, before anything is traced. */
static void check_otlp_config(const struct argp_state *state, const char *url)
{
	struct otlp_config c;
	char why[600];

	if (otlp_config__load(&c, url, why, sizeof(why)))
		usage_error(state, "--output otlp: %s", why);
	otlp_config__free(&c);
}

/* An S3 source or destination needs credentials: a usage error when there are none, before
 * anything is traced or read. */
static void check_s3_config(const struct argp_state *state, const char *url)
{
	struct s3_config c;
	struct s3_url u;
	char why[600];

	if (s3__parse_url(url, &u, why, sizeof(why)))
		usage_error(state, "invalid %s: %s", url, why);
	if (s3__config_load(&c, why, sizeof(why)))
		usage_error(state, "%s: %s", url, why);
	explicit_bzero(&c, sizeof(c));
}

static bool cuda_calls_set;	/* --cuda-calls was given */
static char run_user_name[256];	/* run --user, resolved */

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
	case OPT_JOB: {
		static char job[JOB_ID_MAX];

		if (!job_id__clean(arg, strlen(arg), job, sizeof(job)) || strcmp(job, arg) != 0)
			usage_error(state, "invalid --job '%s': 1 to %d of A-Z a-z 0-9 . _ -", arg,
				    JOB_ID_MAX - 1);
		o->job = job;
		break;
	}
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
		parse_output(state, o, arg);
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
		else if (!strcmp(arg, "sampled")) {	/* retired: its estimates were wrong */
			o->cuda_calls = CUDA_CALLS_ALWAYS;
			elog("--cuda-calls sampled is retired: every CUDA call is counted "
			     "(--cuda-calls always, the default)");
		} else {
			usage_error(state, "invalid --cuda-calls '%s': use always or off", arg);
		}
		cuda_calls_set = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case OPT_METRICS: {
		static char canonical[INET_ADDRSTRLEN + 8];
		char ip[INET_ADDRSTRLEN];

		if (metrics__parse_addr(arg, &o->metrics_ip, &o->metrics_port))
			usage_error(state, "invalid --metrics '%s': use PORT or :PORT (on 127.0.0.1), "
				    "or ADDR:PORT, an IPv4 address and a port (0.0.0.0:9464)", arg);
		inet_ntop(AF_INET, &o->metrics_ip, ip, sizeof(ip));
		snprintf(canonical, sizeof(canonical), "%s:%u", ip, o->metrics_port);
		o->metrics_addr = canonical;	/* as messages name it: 127.0.0.1:9464 */
		break;
	}
	case OPT_RUN_USER:
		if (!*arg)
			usage_error(state, "empty --user");
		o->run_user = arg;
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
		if ((reads_spool(o->cmd) || o->cmd == CMD_SHIP) && state->arg_num == 0 && *arg) {
			o->path = arg;	/* trace [DIR], ship [DIR] */
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
		if (o->run_user) {
			struct passwd *pw = getpwnam(o->run_user);
			char *end;
			unsigned long uid;

			errno = 0;
			uid = strtoul(o->run_user, &end, 10);
			if (!pw && !*end && !errno && uid < 0xffffffffUL)
				pw = getpwuid((uid_t)uid);
			if (!pw)
				usage_error(state, "--user %s: no such user", o->run_user);
			o->run_uid = pw->pw_uid;
			o->run_gid = pw->pw_gid;
			if (strlen(pw->pw_name) >= sizeof(run_user_name))
				usage_error(state, "--user %s: name too long", o->run_user);
			strcpy(run_user_name, pw->pw_name);	/* getpw*'s buffer is reused */
			o->run_user = run_user_name;
		}
		if (o->metrics_addr && o->cmd == CMD_DOCTOR)
			usage_error(state, "--metrics is for attach, run and watch");
		if (o->cmd == CMD_HEALTH && o->format != FORMAT_TEXT && o->format != FORMAT_JSON)
			usage_error(state, "health prints text or json");
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
		if (o->s3_url && (o->cmd == CMD_DOCTOR || reads_spool(o->cmd)))
			usage_error(state, "--output s3:// is for attach, run and watch");
		if (o->s3_url)
			check_s3_config(state, o->s3_url);
		if (o->otlp_url && (o->cmd == CMD_DOCTOR || reads_spool(o->cmd)))
			usage_error(state, "--output otlp is for attach, run and watch");
		if (o->otlp_url)
			check_otlp_config(state, o->otlp_url);
		if (o->cmd == CMD_SHIP && !o->s3_url && !o->otlp_url)
			usage_error(state, "ship needs --output s3://BUCKET/PREFIX and/or otlp[=URL]");
		if (o->cmd == CMD_SHIP && (o->sinks & ~SINK_SPOOL))
			usage_error(state, "ship sends a spool: --output takes s3:// and otlp only");
		if (o->job && reads_spool(o->cmd) && !o->ranks)
			usage_error(state, "--job reads one job: it is for trace --ranks");
		if (reads_spool(o->cmd) && s3__is_url(o->path))
			check_s3_config(state, o->path);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}


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
		fputs(cli_top_doc, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(cli_top_doc, stdout);
		return -1;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		return -1;
	}
	for (i = 0; i < cli_ncommands; i++) {
		if (strcmp(argv[1], cli_commands[i].name) != 0)
			continue;
		o->cmd = cli_commands[i].cmd;
		argp.doc = cli_commands[i].doc;
		argp.options = cli_commands[i].options;
		argp.args_doc = o->cmd == CMD_RUN ? "-- CMD [ARGS...]" :
				reads_spool(o->cmd) || o->cmd == CMD_SHIP ? "[DIR]" : NULL;
		/* argp names the program after the argv[0] it parses (our argv[1]): make that
		 * "cirron-probe attach", so messages read "cirron-probe attach: ..." */
		snprintf(prog, sizeof(prog), "cirron-probe %s", cli_commands[i].name);
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
