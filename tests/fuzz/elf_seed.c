// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A small shared object whose symbols look like the ones the loader resolves: the seed of
// fuzz_elf_syms (built whole and stripped by the Makefile).
int _dl_debug_state_data;

void _dl_debug_state(void)
{
}

int cudaLaunchKernel(const void *f, int a)
{
	return f ? a + 1 : a;
}

int _ZN5torch8autograd6Engine7executeEv(int x)
{
	return x * 3;
}
