// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <fcntl.h>
#include <sys/wait.h>
#include "cli.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "unit.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)	/* argv arrays end in NULL */

static void parse_sinks(void)
{
	unsigned int sinks = 0xdead;

	ASSERT_OK(cli__parse_sinks("spool", &sinks), "spool");
	ASSERT_EQ(sinks, SINK_SPOOL, "spool bits");
	ASSERT_OK(cli__parse_sinks("stdout", &sinks), "stdout");
	ASSERT_EQ(sinks, SINK_STDOUT, "stdout bits");
	ASSERT_OK(cli__parse_sinks("spool,stdout", &sinks), "spool,stdout");
	ASSERT_EQ(sinks, SINK_SPOOL | SINK_STDOUT, "spool,stdout bits");
	ASSERT_OK(cli__parse_sinks("stdout,spool", &sinks), "stdout,spool");
	ASSERT_EQ(sinks, SINK_SPOOL | SINK_STDOUT, "stdout,spool bits");
	sinks = 0xdead;
	ASSERT_OK(cli__parse_sinks("none", &sinks), "none");
	ASSERT_EQ(sinks, 0, "none bits");

	ASSERT_EQ(cli__parse_sinks("", &sinks), -EINVAL, "empty");
	ASSERT_EQ(cli__parse_sinks("bogus", &sinks), -EINVAL, "bogus");
	ASSERT_EQ(cli__parse_sinks("spool,bogus", &sinks), -EINVAL, "spool,bogus");
	ASSERT_EQ(cli__parse_sinks("none,spool", &sinks), -EINVAL, "none,spool");
	ASSERT_EQ(cli__parse_sinks("spool,none", &sinks), -EINVAL, "spool,none");
	ASSERT_EQ(cli__parse_sinks(",", &sinks), -EINVAL, "only a comma");
	ASSERT_EQ(cli__parse_sinks("Spool", &sinks), -EINVAL, "case matters");
	ASSERT_EQ(cli__parse_sinks("spoolstdout", &sinks), -EINVAL, "no separator");
}

static void parse_attach_defaults(void)
{
	char *argv[] = { "cirron-probe", "attach", "-p", "4242", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.cmd, CMD_ATTACH, "cmd");
	ASSERT_EQ(o.pid, 4242, "pid");
	ASSERT_EQ(o.sinks, SINK_SPOOL, "default sinks");
	ASSERT_STREQ(o.path, "./.cirron", "default path");
	ASSERT_DBL_EQ(o.flush_interval_s, 1.0, "default flush interval");
	ASSERT_DBL_EQ(o.duration_s, 0, "default duration");
	ASSERT_FALSE(o.cuda_detail, "cuda_detail");
	ASSERT_NULL(o.cache_dir, "cache_dir");
	ASSERT_NULL(o.run_argv, "run_argv");
	ASSERT_EQ(o.verbose, 0, "verbose");
	ASSERT_EQ(o.epoch_steps, 1000, "default epoch steps");
	ASSERT_EQ(o.max_spool_bytes, 0, "no spool cap");
}

static void parse_attach_all_options(void)
{
	char *argv[] = { "cirron-probe", "attach", "--pid=77", "--output", "spool,stdout",
			 "-d", "/var/tmp/trace dir", "--flush-interval", "0.25", "--duration",
			 "90", "--cuda-detail", "--cache-dir", "/tmp/c", "-vv", "--epoch-steps",
			 "50", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.cmd, CMD_ATTACH, "cmd");
	ASSERT_EQ(o.pid, 77, "pid");
	ASSERT_EQ(o.sinks, SINK_SPOOL | SINK_STDOUT, "sinks");
	ASSERT_STREQ(o.path, "/var/tmp/trace dir", "path");
	ASSERT_DBL_EQ(o.flush_interval_s, 0.25, "flush interval");
	ASSERT_DBL_EQ(o.duration_s, 90, "duration");
	ASSERT_TRUE(o.cuda_detail, "cuda_detail");
	ASSERT_STREQ(o.cache_dir, "/tmp/c", "cache_dir");
	ASSERT_EQ(o.verbose, 2, "verbose");
	ASSERT_EQ(o.epoch_steps, 50, "epoch steps");
	ASSERT_EQ(log_verbosity, 2, "log_verbosity follows -vv");
	log_verbosity = 0;
}

static void parse_output_none(void)
{
	char *argv[] = { "cirron-probe", "attach", "-o", "none", "-p", "1", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.sinks, 0, "sinks");
	ASSERT_EQ(o.pid, 1, "pid");
}

static void parse_doctor(void)
{
	char *argv[] = { "cirron-probe", "doctor", "-p", "31337", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.cmd, CMD_DOCTOR, "cmd");
	ASSERT_EQ(o.pid, 31337, "pid");
	ASSERT_NULL(o.run_argv, "run_argv");
}

static void parse_doctor_options(void)
{
	char *argv[] = { "cirron-probe", "doctor", "-p", "7", "--python-frames", "always",
			 "--cuda-calls", "off", "--cache-dir", "/tmp/c", "-v", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.python_frames, PYF_ALWAYS, "python_frames");
	ASSERT_EQ(o.cuda_calls, CUDA_CALLS_OFF, "cuda_calls");
	ASSERT_STREQ(o.cache_dir, "/tmp/c", "cache_dir");
	ASSERT_EQ(o.verbose, 1, "verbose");
}

static void parse_run(void)
{
	char *argv[] = { "cirron-probe", "run", "--output", "stdout", "--duration", "2.5", "--",
			 "python3", "-c", "import sys; sys.exit(3)", "-p", "9", NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.cmd, CMD_RUN, "cmd");
	ASSERT_EQ(o.pid, 0, "the command's -p is not ours");
	ASSERT_EQ(o.sinks, SINK_STDOUT, "sinks");
	ASSERT_DBL_EQ(o.duration_s, 2.5, "duration");
	if (!ASSERT_OK_PTR(o.run_argv, "run_argv"))
		return;
	/* run_argv points into argv, at the command, and keeps its flags as they were */
	ASSERT_TRUE(o.run_argv == &argv[7], "run_argv is &argv[7]");
	ASSERT_STREQ(o.run_argv[0], "python3", "command");
	ASSERT_STREQ(o.run_argv[1], "-c", "its -c");
	ASSERT_STREQ(o.run_argv[2], "import sys; sys.exit(3)", "its script");
	ASSERT_STREQ(o.run_argv[3], "-p", "its -p");
	ASSERT_STREQ(o.run_argv[4], "9", "its -p value");
	ASSERT_NULL(o.run_argv[5], "NULL-terminated");
}

static void parse_run_without_dashdash(void)
{
	char *argv[] = { "cirron-probe", "run", "-o", "none", "ls", "-l", "--output", "x",
			 NULL };
	struct options o;

	if (!ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "parse"))
		return;
	ASSERT_EQ(o.sinks, 0, "our -o");
	if (!ASSERT_OK_PTR(o.run_argv, "run_argv"))
		return;
	ASSERT_STREQ(o.run_argv[0], "ls", "command");
	ASSERT_STREQ(o.run_argv[1], "-l", "its -l");
	ASSERT_STREQ(o.run_argv[2], "--output", "its --output");
	ASSERT_STREQ(o.run_argv[3], "x", "its --output value");
	ASSERT_NULL(o.run_argv[4], "NULL-terminated");
}

static void parse_max_spool_mb(void)
{
	static const struct {
		const char *arg;
		unsigned long long bytes;
	} cases[] = {
		{ "100", 100ull << 20 }, { "0.05", 52428 }, { "1e-6", 1 }, { "1048576", 1ull << 40 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "cirron-probe", "run", "--max-spool-mb", (char *)cases[i].arg, "--",
				 "true", NULL };
		struct options o;

		if (ASSERT_OK(cli__parse(ARGC(argv), argv, &o), cases[i].arg))
			ASSERT_U64_EQ(o.max_spool_bytes, cases[i].bytes, cases[i].arg);
	}
}

static void parse_unknown_command(void)
{
	char *argv[] = { "cirron-probe", "attack", "-p", "1", NULL };
	char *argv_none[] = { "cirron-probe", NULL };
	int err = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
	struct options o;
	int rc_unknown, rc_none;

	if (err >= 0 && null >= 0)	/* the messages are expected noise */
		dup2(null, STDERR_FILENO);
	/* returns, does not exit: the test would end here otherwise */
	rc_unknown = cli__parse(ARGC(argv), argv, &o);
	rc_none = cli__parse(ARGC(argv_none), argv_none, &o);
	if (err >= 0) {
		dup2(err, STDERR_FILENO);
		close(err);
	}
	if (null >= 0)
		close(null);
	ASSERT_EQ(rc_unknown, EXIT_USAGE, "unknown command");
	ASSERT_EQ(rc_none, EXIT_USAGE, "no command");
}

/* argp exits on usage errors: parse in a child and return its exit status (-1: no exit). */
static int parse_in_child(int argc, char **argv)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct options o;
		int null = open("/dev/null", O_WRONLY);
		int rc;

		if (null >= 0) {	/* argp's usage message is expected noise */
			dup2(null, STDERR_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		rc = cli__parse(argc, argv, &o);
		_exit(rc == 0 ? 100 : rc);	/* 100: accepted */
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#define ASSERT_USAGE(name, ...) ({						\
	char *___argv[] = { "cirron-probe", __VA_ARGS__, NULL };		\
	ASSERT_EQ(parse_in_child(ARGC(___argv), ___argv), EXIT_USAGE, name);	\
})

static void usage_errors_exit_64(void)
{
	char *ok[] = { "cirron-probe", "attach", "-p", "12", NULL };

	/* the harness itself: a good command line is accepted in the child */
	ASSERT_EQ(parse_in_child(ARGC(ok), ok), 100, "good command line");

	ASSERT_USAGE("pid abc", "attach", "-p", "abc");
	ASSERT_USAGE("pid -5", "attach", "-p", "-5");
	ASSERT_USAGE("pid 0", "attach", "-p", "0");
	ASSERT_USAGE("pid 12x", "attach", "-p", "12x");
	ASSERT_USAGE("pid empty", "attach", "-p", "");
	ASSERT_USAGE("pid too big", "attach", "-p", "99999999999");
	ASSERT_USAGE("attach without -p", "attach");
	ASSERT_USAGE("doctor without -p", "doctor", "--cache-dir", "/tmp");
	/* doctor takes only what decides which probes resolve (its --help and cirron-probe(1)) */
	ASSERT_USAGE("doctor with --output", "doctor", "-p", "1", "-o", "stdout");
	ASSERT_USAGE("doctor with --duration", "doctor", "-p", "1", "--duration", "5");
	ASSERT_USAGE("unknown command", "attack", "-p", "1");
	ASSERT_USAGE("--output bogus", "attach", "-p", "1", "--output", "bogus");
	ASSERT_USAGE("--output spool,bogus", "attach", "-p", "1", "-o", "spool,bogus");
	ASSERT_USAGE("--flush-interval 0", "attach", "-p", "1", "--flush-interval", "0");
	ASSERT_USAGE("--flush-interval -1", "attach", "-p", "1", "--flush-interval", "-1");
	ASSERT_USAGE("--flush-interval abc", "attach", "-p", "1", "--flush-interval", "abc");
	ASSERT_USAGE("--flush-interval nan", "attach", "-p", "1", "--flush-interval", "nan");
	ASSERT_USAGE("--duration 1s", "attach", "-p", "1", "--duration", "1s");
	ASSERT_USAGE("--duration nan", "attach", "-p", "1", "--duration", "nan");
	ASSERT_USAGE("--duration inf", "attach", "-p", "1", "--duration", "inf");
	ASSERT_USAGE("--epoch-steps 0", "attach", "-p", "1", "--epoch-steps", "0");
	ASSERT_USAGE("empty --path", "attach", "-p", "1", "--path", "");
	ASSERT_USAGE("unknown option", "attach", "-p", "1", "--frobnicate");
	ASSERT_USAGE("stray argument", "attach", "-p", "1", "extra");
	ASSERT_USAGE("run without a command", "run", "-o", "stdout");
	ASSERT_USAGE("run with -p", "run", "-p", "5", "--", "true");
	ASSERT_USAGE("--max-spool-mb 0", "attach", "-p", "1", "--max-spool-mb", "0");
	ASSERT_USAGE("--max-spool-mb -1", "attach", "-p", "1", "--max-spool-mb", "-1");
	ASSERT_USAGE("--max-spool-mb 1e-7", "attach", "-p", "1", "--max-spool-mb", "1e-7");
	ASSERT_USAGE("--max-spool-mb 10M", "attach", "-p", "1", "--max-spool-mb", "10M");
	ASSERT_USAGE("--max-spool-mb nan", "attach", "-p", "1", "--max-spool-mb", "nan");
	ASSERT_USAGE("--max-spool-mb inf", "attach", "-p", "1", "--max-spool-mb", "inf");
	ASSERT_USAGE("--max-spool-mb 2e9", "attach", "-p", "1", "--max-spool-mb", "2e9");
	ASSERT_USAGE("--max-spool-mb without the spool", "attach", "-p", "1", "-o", "stdout",
		     "--max-spool-mb", "5");
}

/* --output s3://: the URL kept, the spool implied (it is the upload's buffer). */
static void parse_output_s3(void)
{
	char *argv[] = { "cirron-probe", "attach", "-p", "1", "--output",
			 "stdout,s3://traces/job-7/nodes", NULL };
	char *only[] = { "cirron-probe", "attach", "-p", "1", "-o", "s3://traces", NULL };
	struct options o;

	setenv("AWS_ACCESS_KEY_ID", "AKIDUNIT", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
	if (ASSERT_OK(cli__parse(ARGC(argv), argv, &o), "stdout,s3://")) {
		ASSERT_EQ(o.sinks, SINK_SPOOL | SINK_STDOUT, "sinks");
		ASSERT_STREQ(o.s3_url, "s3://traces/job-7/nodes", "url");
	}
	if (ASSERT_OK(cli__parse(ARGC(only), only, &o), "s3:// alone")) {
		ASSERT_EQ(o.sinks, SINK_SPOOL, "the spool comes with it");
		ASSERT_STREQ(o.s3_url, "s3://traces", "url");
	}
	ASSERT_USAGE("a bad bucket", "attach", "-p", "1", "-o", "spool,s3://Bad_Bucket/x");
	ASSERT_USAGE("no bucket", "attach", "-p", "1", "-o", "s3://");
	ASSERT_USAGE("s3 with none", "attach", "-p", "1", "-o", "none,s3://traces");
	ASSERT_USAGE("two s3", "attach", "-p", "1", "-o", "s3://traces,s3://other");
	ASSERT_USAGE("trailing comma", "attach", "-p", "1", "-o", "s3://traces,");
	ASSERT_USAGE("s3 output for trace", "doctor", "-p", "1", "-o", "s3://traces");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	ASSERT_USAGE("no keys", "attach", "-p", "1", "-o", "s3://traces");
	ASSERT_USAGE("no keys to read", "trace", "s3://traces/job-7");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

int main(void)
{
	RUN_TEST(parse_sinks);
	RUN_TEST(parse_attach_defaults);
	RUN_TEST(parse_attach_all_options);
	RUN_TEST(parse_output_none);
	RUN_TEST(parse_doctor);
	RUN_TEST(parse_doctor_options);
	RUN_TEST(parse_run);
	RUN_TEST(parse_run_without_dashdash);
	RUN_TEST(parse_max_spool_mb);
	RUN_TEST(parse_unknown_command);
	RUN_TEST(usage_errors_exit_64);
	RUN_TEST(parse_output_s3);
	return unit__done();
}
