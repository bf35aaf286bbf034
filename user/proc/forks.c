// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Forks that did not exec (issue 44): a DataLoader worker runs its job's image, whatever torch
// names it (torch 2 calls its workers pt_data_worker, 1.13 leaves the name as it was), so it
// is told by what it runs, read from /proc.
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "proc/forks.h"
#include "proc/procfs.h"

static int exe_of(int pid, struct stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return stat(path, st);
}

int forks__parent_image(int pid)
{
	char cmd[4096], parent_cmd[4096], state;
	struct stat a, b;
	int ppid;

	if (procfs__stat(pid, &state, &ppid) || ppid <= 1)
		return 0;
	if (exe_of(pid, &a) || exe_of(ppid, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return 0;
	if (procfs__cmdline(pid, cmd, sizeof(cmd)) ||
	    procfs__cmdline(ppid, parent_cmd, sizeof(parent_cmd)) || strcmp(cmd, parent_cmd) != 0)
		return 0;
	return ppid;
}
