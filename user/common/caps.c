// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the observer needs when it is not root: deploy/capabilities, built in.
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include "capabilities.h"	/* generated from deploy/capabilities */
#include "common/caps.h"

const struct cap_need caps__needed[] = { CAPS_NEEDED };
const size_t caps__count = sizeof(caps__needed) / sizeof(caps__needed[0]);

unsigned int caps__kernel(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return major << 8 | minor;
}

uint64_t caps__effective(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff;
}

static bool has(uint64_t eff, int cap)
{
	return eff & (1ull << cap);
}

bool caps__lacks(const struct cap_need *c, uint64_t eff, unsigned int kernel)
{
	struct rlimit rl;

	if ((c->from && kernel < c->from) || (c->before && kernel >= c->before))
		return false;
	if (has(eff, c->cap))
		return false;
	if ((c->cap == CAP_BPF || c->cap == CAP_PERFMON) && has(eff, CAP_SYS_ADMIN))
		return false;
	if (c->cap == CAP_SYS_RESOURCE && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur == RLIM_INFINITY)
		return false;
	return true;
}

int caps__missing(bool others, char *buf, size_t size)
{
	uint64_t eff = caps__effective();
	unsigned int kernel = caps__kernel();
	size_t len = 0;
	int n = 0;

	if (size)
		buf[0] = 0;
	for (size_t i = 0; i < caps__count; i++) {
		const struct cap_need *c = &caps__needed[i];

		if ((c->others && !others) || !caps__lacks(c, eff, kernel))
			continue;
		if (len < size) {
			int w = snprintf(buf + len, size - len, "%s%s", n ? ", " : "", c->name);

			len += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	return n;
}
