// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// hitcost LOOP N ROUNDS HIT_BPF_O: per round, runs LOOP (loop.c) under each probe case in
// turn (interleaved), then prints per case the median, min and max ns per call and the
// process's CPU ns per call. Probes: the empty programs of hit.bpf.c, perf-event uprobes.
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct probe_case { const char *name, *fn, *sym; int ret; };
static const struct probe_case cases[] = {
	{ "none (f_push)", "f_push", NULL, 0 },
	{ "entry push %rbp", "f_push", "f_push", 0 },
	{ "none (f_endbr)", "f_endbr", NULL, 0 },
	{ "entry endbr64", "f_endbr", "f_endbr", 0 },
	{ "ret (c3)", "f_push", "f_push_ret", 0 },
	{ "after call (mov)", "f_push", "after_call", 0 },
	{ "uretprobe", "f_push", "f_push", 1 },
	{ "none (f_tail)", "f_tail", NULL, 0 },
	{ "tail jmp rel32 (e9)", "f_tail", "f_tail_jmp", 0 },
	{ "entry+ret", "f_push", "f_push+f_push_ret", 0 },
	{ "entry+after call", "f_push", "f_push+after_call", 0 },
	{ "entry+uretprobe", "f_push", "f_push+uret", 0 },
};
#define NC (sizeof(cases) / sizeof(cases[0]))

static double cpu_ns;

static double run(const char *bench, const char *fn, const char *n)
{
	struct rusage ru;
	int p[2];
	char buf[128] = "";
	double v = -1;

	if (pipe(p))
		exit(1);
	if (!fork()) {
		dup2(p[1], 1);
		execl(bench, bench, fn, n, NULL);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], buf, sizeof(buf) - 1) < 0)
		exit(1);
	close(p[0]);
	wait4(-1, NULL, 0, &ru);
	cpu_ns = ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) / atol(n);
	sscanf(buf, "%*s %lf", &v);
	return v;
}

static struct bpf_link *attach(struct bpf_object *obj, const char *bench, const char *sym, int ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = sym, .retprobe = ret);
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, ret ? "on_ret" : "on_hit");
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, bench, 0, &o);

	if (!l) {
		fprintf(stderr, "attach %s failed\n", sym);
		exit(1);
	}
	return l;
}

static int cmp(const void *a, const void *b)
{
	double x = *(double *)a, y = *(double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *bench, *n;
	struct bpf_object *obj;
	double *res, *cpu;
	int rounds;

	if (argc != 5)
		return 64;
	bench = argv[1];
	n = argv[2];
	rounds = atoi(argv[3]);
	obj = bpf_object__open_file(argv[4], NULL);
	res = calloc(NC * (rounds > 0 ? rounds : 1), sizeof(double));
	cpu = calloc(NC * (rounds > 0 ? rounds : 1), sizeof(double));
	if (!obj || !res || !cpu || rounds < 1 || bpf_object__load(obj))
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (size_t c = 0; c < NC; c++) {
			struct bpf_link *l[2] = {};
			char sym[64];

			if (cases[c].sym) {
				char *plus;

				snprintf(sym, sizeof(sym), "%s", cases[c].sym);
				plus = strchr(sym, '+');
				if (plus) {
					*plus = 0;
					l[0] = attach(obj, bench, sym, 0);
					if (!strcmp(plus + 1, "uret"))
						l[1] = attach(obj, bench, sym, 1);
					else
						l[1] = attach(obj, bench, plus + 1, 0);
				} else {
					l[0] = attach(obj, bench, sym, cases[c].ret);
				}
			}
			res[c * rounds + r] = run(bench, cases[c].fn, n);
			cpu[c * rounds + r] = cpu_ns;
			bpf_link__destroy(l[0]);
			bpf_link__destroy(l[1]);
		}
	}
	printf("%-22s %10s %10s %10s %12s\n", "case", "median", "min", "max", "cpu median");
	for (size_t c = 0; c < NC; c++) {
		double *v = res + c * rounds, *u = cpu + c * rounds;

		qsort(v, rounds, sizeof(double), cmp);
		qsort(u, rounds, sizeof(double), cmp);
		printf("%-22s %10.1f %10.1f %10.1f %12.1f\n", cases[c].name, v[rounds / 2], v[0],
		       v[rounds - 1], u[rounds / 2]);
	}
	return 0;
}
