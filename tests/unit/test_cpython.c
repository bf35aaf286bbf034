// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The CPython tier's ways to know a build, checked against live interpreters of this
// machine: slot_tp_call found in the slotdefs table (the way for stripped builds) is where
// the symbol table says (pyenv's unstripped 3.10-3.13) or where the build-id entry says
// (Debian's stripped 3.11.2), and the version read from the target.
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <sys/wait.h>
#include "unit.h"
#include "pyobj/cpython.h"
#include "proc/elf_syms.h"
#include "proc/procfs.h"
#include "proc/sym_cache.h"
#include "traced/target.h"

/* Starts python (blocked reading stdin) and fills f with the mapping of lib. */
static pid_t start_python(const char *python, const char *lib, struct mapped_file *f, int *in)
{
	int p[2];
	pid_t pid;
	uint64_t load;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[1]);
		execl(python, python, "-c", "import sys; sys.stdin.read()", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*in = p[1];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	/* wait until the interpreter has mapped its library (polling /proc: an event, not a
	 * time), at most ~10 s */
	for (int tries = 0; tries < 1000 && !f->map_start; tries++) {
		struct proc_maps maps;

		if (procfs__read_maps(pid, &maps) == 0) {
			for (size_t i = 0; i < maps.n; i++)
				if (!strcmp(maps.v[i].path, lib) &&
				    (!f->map_start || maps.v[i].start < f->map_start))
					f->map_start = maps.v[i].start;
			procfs__free_maps(&maps);
		}
		if (!f->map_start)
			usleep(10000);
	}
	f->path = (char *)lib;
	f->host_path = (char *)lib;
	f->fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (elf_syms__first_load_vaddr(lib, &load) == 0)
		f->bias = f->map_start - load;
	/* Py_Version and the runtime are set once the interpreter runs: give it a moment by
	 * waiting for its main thread to block on stdin */
	for (int tries = 0; tries < 1000; tries++) {
		char state = 0;
		int ppid;

		if (procfs__stat(pid, &state, &ppid) == 0 && state == 'S')
			break;
		usleep(10000);
	}
	return pid;
}

static void stop_python(pid_t pid, int in, struct mapped_file *f)
{
	close(in);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (f->fd >= 0)
		close(f->fd);
}

static void pyenv_builds(void)
{
	struct sym_cache *syms = sym_cache__new(NULL);
	glob_t g;
	int checked = 0;

	if (glob("/root/.pyenv/versions/3.1[0-3].*/lib/libpython3.1[0-3].so.1.0", 0, NULL, &g)) {
		printf("  (no pyenv CPython 3.10-3.13 here: skipped)\n");
		sym_cache__free(syms);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *lib = g.gl_pathv[i];
		struct sym_query q = { .name = "slot_tp_call" };
		struct mapped_file f;
		char python[512];
		unsigned int minor;
		uint64_t off = 0;
		uint32_t hex = 0;
		int in;
		pid_t pid;

		if (sscanf(strstr(lib, "libpython3."), "libpython3.%u", &minor) != 1)
			continue;
		snprintf(python, sizeof(python), "%.*s/bin/python3.%u",
			 (int)(strstr(lib, "/lib/libpython") - lib), lib, minor);
		if (access(python, X_OK) || elf_syms__resolve(lib, &q, 1) != 1)
			continue;
		pid = start_python(python, lib, &f, &in);
		if (!ASSERT_GT(pid, 0, "fork") || !ASSERT_NEQ(f.map_start, 0, lib)) {
			free(q.found);
			continue;
		}
		ASSERT_EQ(cpython__version(syms, pid, &f, &hex), 0, "version");
		ASSERT_EQ((int)(hex >> 16), 0x0300 | (int)minor, "minor version");
		ASSERT_EQ(cpython__find_slot_tp_call(pid, &f, &off), 0, "slotdefs");
		ASSERT_U64_EQ(off, q.file_offset, lib);
		if (minor >= 13)
			ASSERT_EQ(cpython__check_debug_offsets(syms, pid, &f, hex), 0,
				  "_Py_DebugOffsets");
		else if (minor >= 11)
			ASSERT_NEQ(cpython__imported(syms, pid, &f, hex,
						     (const char *const[]){ "sys" }, 1, python,
						     sizeof(python), NULL), -ENOTSUP, "sys.modules");
		free(q.found);
		stop_python(pid, in, &f);
		checked++;
	}
	globfree(&g);
	sym_cache__free(syms);
	ASSERT_GT(checked, 0, "pyenv builds checked");
}

/* Debian's stripped 3.11.2: no symbol, the build-id entry's offset (probes/cpython.json). */
static void debian_stripped(void)
{
	const char *exe = "/usr/bin/python3.11";
	struct sym_cache *syms = sym_cache__new(NULL);
	struct sym_query q = { .name = "slot_tp_call" };
	struct mapped_file f;
	char id[128];
	uint64_t off = 0;
	uint32_t hex = 0;
	int in;
	pid_t pid;

	if (elf_syms__build_id(exe, id, sizeof(id)) ||
	    strcmp(id, "571d98e01096d5c1c32420d229a6731a0a50d2a0") != 0) {
		printf("  (not Debian bookworm's python3.11 3.11.2: skipped)\n");
		sym_cache__free(syms);
		return;
	}
	ASSERT_EQ(elf_syms__resolve(exe, &q, 1), 0, "stripped: no slot_tp_call symbol");
	pid = start_python(exe, exe, &f, &in);
	if (ASSERT_NEQ(f.map_start, 0, "mapped")) {
		ASSERT_EQ(cpython__version(syms, pid, &f, &hex), 0, "version");
		ASSERT_EQ(hex & 0xffffff00, 0x030b0200, "3.11.2");
		ASSERT_EQ(cpython__find_slot_tp_call(pid, &f, &off), 0, "slotdefs");
		ASSERT_U64_EQ(off, 0x1e48b0, "the build-id entry's offset");
	}
	stop_python(pid, in, &f);
	sym_cache__free(syms);
}

int main(void)
{
	RUN_TEST(pyenv_builds);
	RUN_TEST(debian_stripped);
	return unit__done();
}
