// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A real libcudart client that calls every probed API a known number of times. With no
// GPU the calls fail (cudaErrorNoDevice), but their uprobes fire all the same. The counts
// below are what tests/e2e expects to find in the spool.
//
//   cuda_calls [--wait] [--hold] [--loop] [--exit CODE] [--threads N --waves W] [--exec-self]
//     --wait   print "ready", then wait for SIGUSR1 before calling anything (attach tests)
//     --hold   after the calls print "done" and wait for SIGUSR1 (kill tests)
//     --loop   after the calls launch kernels until SIGUSR1, then print "looped N"
//     --threads N --waves W  then W times: N threads each make the calls once, joined
//              (threads coming and going): 1 + N x W passes in all
//     --exec-self  at the end exec itself with only "--exit CODE" (a new image, same pid)
//     --leader-leaves  at the end the main thread leaves alone (pthread_exit: /proc shows the
//              process as a zombie) while a thread waits for SIGUSR1, then exits with CODE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_LAUNCH_A	50
#define N_LAUNCH_B	7
#define N_MEMCPY_H2D	3	/* 4096 bytes each */
#define N_MEMCPY_D2H	2	/* 1000 bytes each */
#define N_MEMCPY_ASYNC	4	/* 512 bytes each, device to device */
#define N_MALLOC	5	/* 1 MiB each */
#define N_FREE		5
#define N_STREAM_SYNC	6
#define N_DEVICE_SYNC	2
#define N_EVENT_SYNC	1

/* Host stubs of two "kernels": their addresses are what cudaLaunchKernel receives. */
__attribute__((noinline)) void cirron_test_kernel_a(float *x) { __asm__ volatile("" ::"r"(x)); }
__attribute__((noinline)) void cirron_test_kernel_b(int *x) { __asm__ volatile("" ::"r"(x)); }

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void wait_usr1(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
	go = 0;
}

static void launch(const void *fn)
{
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	void *args[1] = { NULL };

	cudaLaunchKernel(fn, grid, block, args, 0, 0);
}

/* One pass of every probed call, in a fixed order. Returns the device count seen. */
static int calls(void)
{
	static char host[4096], host2[4096];
	void *dev = NULL;
	int n = -1, i;

	cudaGetDeviceCount(&n);
	for (i = 0; i < N_LAUNCH_A; i++)
		launch((const void *)cirron_test_kernel_a);
	for (i = 0; i < N_LAUNCH_B; i++)
		launch((const void *)cirron_test_kernel_b);
	for (i = 0; i < N_MEMCPY_H2D; i++)
		cudaMemcpy(host2, host, 4096, cudaMemcpyHostToDevice);
	for (i = 0; i < N_MEMCPY_D2H; i++)
		cudaMemcpy(host, host2, 1000, cudaMemcpyDeviceToHost);
	for (i = 0; i < N_MEMCPY_ASYNC; i++)
		cudaMemcpyAsync(host2, host, 512, cudaMemcpyDeviceToDevice, 0);
	for (i = 0; i < N_MALLOC; i++)
		cudaMalloc(&dev, 1 << 20);
	for (i = 0; i < N_FREE; i++)
		cudaFree(dev);
	for (i = 0; i < N_STREAM_SYNC; i++)
		cudaStreamSynchronize(0);
	for (i = 0; i < N_DEVICE_SYNC; i++)
		cudaDeviceSynchronize();
	for (i = 0; i < N_EVENT_SYNC; i++)
		cudaEventSynchronize(0);
	return n;
}

static void *thread_calls(void *arg)
{
	(void)arg;
	calls();
	return NULL;
}

static int exit_code;

static void *last_thread(void *arg)
{
	(void)arg;
	wait_usr1();
	exit(exit_code);
}

static void run_wave(int threads)
{
	pthread_t th[64];
	int n = threads < 64 ? threads : 64;

	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thread_calls, NULL))
			exit(70);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	int wait = 0, hold = 0, loop = 0, code = 0, threads = 0, waves = 0, exec_self = 0,
	    leader_leaves = 0, n, i;
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--loop"))
			loop = 1;
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			code = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--waves") && i + 1 < argc)
			waves = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--exec-self"))
			exec_self = 1;
		else if (!strcmp(argv[i], "--leader-leaves"))
			leader_leaves = 1;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);	/* only delivered inside sigsuspend */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wait) {
		printf("ready\n");
		wait_usr1();
	}

	n = calls();
	for (i = 0; i < waves; i++)
		run_wave(threads);
	printf("done device_count=%d\n", n);

	if (hold)
		wait_usr1();
	if (loop) {
		unsigned long looped = 0;

		sigprocmask(SIG_UNBLOCK, &usr1, NULL);
		while (!go) {
			launch((const void *)cirron_test_kernel_a);
			looped++;
		}
		printf("looped %lu\n", looped);
	}
	if (exec_self) {
		char codestr[16];

		snprintf(codestr, sizeof(codestr), "%d", code);
		execl("/proc/self/exe", argv[0], "--exit", codestr, (char *)NULL);
		return 71;
	}
	if (leader_leaves) {
		pthread_t th;

		exit_code = code;
		if (pthread_create(&th, NULL, last_thread, NULL))
			return 70;
		printf("leader leaves\n");
		pthread_exit(NULL);
	}
	return code;
}
