// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// loop FN N: calls FN (f_push, f_endbr, f_tail; funcs.S) N times through call_loop, prints
// "FN NS_PER_CALL".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long f_push(long), f_endbr(long), f_tail(long);
long call_loop(long n, long (*fn)(long));

int main(int argc, char **argv)
{
	long (*fn)(long) = f_push;
	struct timespec a, b;
	long n, r;

	if (argc != 3)
		return 64;
	if (!strcmp(argv[1], "f_endbr"))
		fn = f_endbr;
	else if (!strcmp(argv[1], "f_tail"))
		fn = f_tail;
	n = atol(argv[2]);
	call_loop(1000, fn);
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = call_loop(n, fn);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%s %.1f %ld\n", argv[1], ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n,
	       r);
	return 0;
}
