// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "observe/gpu_companion.h"

#define COMPANION "libcirron_cupti.so"

const char *gpu_companion__find(char *buf, size_t size, const char **why)
{
	static const char *const beside[] = { "", ".output/", "../lib/cirron-probe/" };
	const char *env = getenv("CIRRON_GPU_COMPANION");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	*why = NULL;
	if (env && !strcmp(env, "off")) {
		*why = "CIRRON_GPU_COMPANION=off";
		return NULL;
	}
	if (env && *env) {
		if (access(env, R_OK)) {
			*why = "CIRRON_GPU_COMPANION names no readable file";
			return NULL;
		}
		snprintf(buf, size, "%s", env);
		return buf;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		*why = "cannot read /proc/self/exe";
		return NULL;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		slash[1] = 0;
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		if ((size_t)snprintf(buf, size, "%s%s" COMPANION, exe, beside[i]) >= size)
			continue;
		if (!access(buf, R_OK)) {
			char *real = realpath(buf, NULL);

			if (real) {
				snprintf(buf, size, "%s", real);
				free(real);
			}
			return buf;
		}
	}
	*why = "no " COMPANION " beside the binary (make companion)";
	return NULL;
}

void gpu_companion__inject(const char *path)
{
	const char *had = getenv("CUDA_INJECTION64_PATH");

	if (path && !(had && *had))
		setenv("CUDA_INJECTION64_PATH", path, 1);
}
