// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A client of the stand-in libnccl.so.2 (nccl_standin.c): the collectives of a few data
// parallel steps, with the counts and types tests/e2e/test_cuda_counts.py expects.
#include <stddef.h>
#include <stdio.h>

enum { INT8 = 0, INT32 = 2, INT64 = 4, FLOAT16 = 6, FLOAT32 = 7, BFLOAT16 = 9 };
int ncclAllReduce(const void *, void *, size_t, int, int, void *, void *);
int ncclReduceScatter(const void *, void *, size_t, int, int, void *, void *);
int ncclAllGather(const void *, void *, size_t, int, void *, void *);
int ncclBroadcast(const void *, void *, size_t, int, int, void *, void *);
int ncclReduce(const void *, void *, size_t, int, int, int, void *, void *);
int ncclSend(const void *, size_t, int, int, void *, void *);
int ncclRecv(void *, size_t, int, int, void *, void *);

int main(void)
{
	static char buf[1 << 16];

	for (int i = 0; i < 3; i++)
		ncclAllReduce(buf, buf, 1000, FLOAT32, 0, NULL, NULL);		/* 4000 bytes */
	ncclReduceScatter(buf, buf, 512, BFLOAT16, 0, NULL, NULL);		/* 1024 */
	ncclAllGather(buf, buf, 256, FLOAT16, NULL, NULL);			/* 512 */
	ncclBroadcast(buf, buf, 100, INT64, 0, NULL, NULL);			/* 800 */
	ncclReduce(buf, buf, 10, INT32, 0, 0, NULL, NULL);			/* 40 */
	ncclSend(buf, 7, INT8, 1, NULL, NULL);					/* 7 */
	ncclRecv(buf, 7, INT8, 1, NULL, NULL);					/* 7 */
	printf("done\n");
	return 0;
}
