// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// sigcount PID: counts the stop and continue signals generated for the descendants of PID
// until SIGINT or SIGTERM, then prints "SIGNAME N" per signal seen and "total N". Prints
// "ready" once its BPF program is attached. A test's own witness (tests/e2e/test_job_first.py).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sigcount.skel.h"

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	struct sigcount_bpf *s;
	unsigned long long total = 0;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: sigcount PID\n");
		return 64;
	}
	s = sigcount_bpf__open();
	if (!s)
		return 1;
	s->rodata->ancestor = (__u32)atoi(argv[1]);
	if (sigcount_bpf__load(s) || sigcount_bpf__attach(s)) {
		fprintf(stderr, "sigcount: cannot load or attach its BPF program\n");
		sigcount_bpf__destroy(s);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!done)
		pause();
	for (int i = 1; i <= 64; i++) {
		if (!s->bss->counts[i])
			continue;
		printf("%s %llu\n", sigabbrev_np(i), (unsigned long long)s->bss->counts[i]);
		total += s->bss->counts[i];
	}
	printf("total %llu\n", total);
	sigcount_bpf__destroy(s);
	return 0;
}
