// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Where a probed C++ function leaves: its exit instructions, so that entry-style uprobes on
// them see every exit without a uretprobe (which breaks C++ exceptions) and without holding
// the process (docs/observer-effects.md). Capstone decodes the body; the unwind table
// (.eh_frame, read with libdw) tells a tail call (frame torn down) from a jump into a part of
// the same function split off by the compiler (frame still set up), which is decoded too.
#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/func_exits.h"

#define MAX_PARTS 8	/* the body and the parts it jumps into */

struct region {
	uint64_t start, end;	/* vaddr */
};

struct finder {
	Elf *elf;
	int machine;		/* EM_X86_64 or EM_AARCH64 */
	Dwarf_CFI *cfi;
	Elf_Data *hdr, *frame;	/* .eh_frame_hdr and .eh_frame, for part ranges */
	uint64_t hdr_addr, frame_addr;
	struct region parts[MAX_PARTS];
	size_t nparts;
	char *why;
	size_t why_size;
};

/* Says why in f->why and gives err back. */
#define fail(f, err, ...) (snprintf((f)->why, (f)->why_size, __VA_ARGS__), (err))

/* File offset of vaddr in an executable PT_LOAD, and how many bytes follow it there. */
static int file_offset(Elf *elf, uint64_t vaddr, uint64_t *off, uint64_t *avail)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			*avail = ph.p_filesz - (vaddr - ph.p_vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

/* The size of the function symbol at vaddr (.symtab, else .dynsym; the largest alias). */
static uint64_t symbol_size(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	uint64_t size = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			int type;

			if (!gelf_getsym(d, (int)i, &s) || s.st_value != vaddr ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if ((type == STT_FUNC || type == STT_GNU_IFUNC) && s.st_size > size)
				size = s.st_size;
		}
	}
	return size;
}

static Elf_Data *section(Elf *elf, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name) != 0)
			continue;
		*addr = sh.sh_addr;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* The range of the FDE that holds addr, from .eh_frame_hdr's sorted table (version 1, table
 * datarel|sdata4) and the FDE's pc_begin/pc_range (pcrel|sdata4, as GCC and clang emit). */
static int fde_range(const struct finder *f, uint64_t addr, struct region *r)
{
	const uint8_t *h = f->hdr ? f->hdr->d_buf : NULL;
	uint64_t lo = 0, hi, fde, at;
	int32_t e[2], begin, range;
	uint32_t n;

	if (!h || f->hdr->d_size < 12 || h[0] != 1 || h[3] != 0x3b || !f->frame)
		return -1;
	memcpy(&n, h + 8, 4);
	if (12 + (uint64_t)n * 8 > f->hdr->d_size)
		return -1;
	for (hi = n; lo < hi;) {
		uint64_t mid = (lo + hi) / 2;

		memcpy(e, h + 12 + mid * 8, 8);
		if (f->hdr_addr + (int64_t)e[0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	memcpy(e, h + 12 + (lo - 1) * 8, 8);
	fde = f->hdr_addr + (int64_t)e[1];
	at = fde - f->frame_addr;
	if (fde < f->frame_addr || at + 16 > f->frame->d_size)
		return -1;
	memcpy(&begin, (const uint8_t *)f->frame->d_buf + at + 8, 4);
	memcpy(&range, (const uint8_t *)f->frame->d_buf + at + 12, 4);
	r->start = fde + 8 + (int64_t)begin;
	r->end = r->start + (uint32_t)range;
	return r->start == f->hdr_addr + (int64_t)e[0] && addr < r->end ? 0 : -1;
}

/* The unwind table's frame state at addr: 1 when the frame is torn down (the CFA is the stack
 * pointer plus what a call pushed: 8 on x86-64, 0 on arm64, as at the first instruction), 0
 * when it is set up, -1 when the table does not say. */
static int frame_torn_down(const struct finder *f, uint64_t addr)
{
	int sp = f->machine == EM_X86_64 ? 7 : 31, reg;
	long call_off = f->machine == EM_X86_64 ? 8 : 0, off;
	Dwarf_Frame *fr;
	Dwarf_Op *ops;
	size_t nops;
	int torn = -1;

	if (!f->cfi || dwarf_cfi_addrframe(f->cfi, addr, &fr))
		return -1;
	if (!dwarf_frame_cfa(fr, &ops, &nops) && nops == 1 &&
	    ((ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) ||
	     ops[0].atom == DW_OP_bregx)) {
		reg = ops[0].atom == DW_OP_bregx ? (int)ops[0].number : ops[0].atom - DW_OP_breg0;
		off = ops[0].atom == DW_OP_bregx ? (long)ops[0].number2 : (long)ops[0].number;
		torn = reg == sp && off == call_off;
	}
	free(fr);
	return torn;
}

static bool in_parts(const struct finder *f, uint64_t a)
{
	for (size_t i = 0; i < f->nparts; i++)
		if (a >= f->parts[i].start && a < f->parts[i].end)
			return true;
	return false;
}

static int add_exit(struct finder *f, struct func_exits *out, uint64_t vaddr)
{
	uint64_t off, avail;

	if (file_offset(f->elf, vaddr, &off, &avail))
		return fail(f, -ENOENT, "exit 0x%llx is in no executable segment",
			    (unsigned long long)vaddr);
	for (size_t i = 0; i < out->n; i++)
		if (out->offsets[i] == off)
			return 0;
	if (out->n == FUNC_EXITS_MAX)
		return fail(f, -E2BIG, "more than %d exits", FUNC_EXITS_MAX);
	out->offsets[out->n++] = off;
	return 0;
}

/* A jump leaving the parts known so far (target 0: indirect). An exit when the frame is torn
 * down; into a split-off part when it is set up (that part is decoded in turn). */
static int out_jump(struct finder *f, struct func_exits *out, uint64_t at, uint64_t target)
{
	int torn = frame_torn_down(f, at);
	struct region r;

	if (torn < 0) {		/* no unwind info: the stack pointer check at the hit decides */
		out->no_cfi++;
		return add_exit(f, out, at);
	}
	if (torn)
		return add_exit(f, out, at);
	if (!target || in_parts(f, target))
		return 0;	/* a switch's indirect jump; a part already known */
	if (fde_range(f, target, &r) || r.start > target)
		return fail(f, -ENOENT, "a jump at 0x%llx with the frame set up goes to 0x%llx, "
			    "in no unwind entry", (unsigned long long)at, (unsigned long long)target);
	if (f->nparts == MAX_PARTS)
		return fail(f, -E2BIG, "more than %d split-off parts", MAX_PARTS - 1);
	f->parts[f->nparts++] = r;
	out->parts++;
	return 0;
}

static bool is_call(csh cs, const cs_insn *in, int machine)
{
	return cs_insn_group(cs, in, CS_GRP_CALL) ||
	       (machine == EM_AARCH64 && (in->id == ARM64_INS_BL || in->id == ARM64_INS_BLR));
}

/* The direct target of a jump, or 0 for an indirect one. */
static uint64_t jump_target(const cs_insn *in, int machine)
{
	if (machine == EM_X86_64) {
		const cs_x86 *x = &in->detail->x86;

		return x->op_count == 1 && x->operands[0].type == X86_OP_IMM ?
		       (uint64_t)x->operands[0].imm : 0;
	}
	for (int i = in->detail->arm64.op_count - 1; i >= 0; i--)	/* b, b.cond, cbz, tbz */
		if (in->detail->arm64.operands[i].type == ARM64_OP_IMM)
			return (uint64_t)in->detail->arm64.operands[i].imm;
	return 0;
}

/* aarch64's pointer-authenticated returns and indirect branches (retaa, retab, braa, braaz,
 * brab, brabz: ARMv8.3 code, e.g. built for Neoverse V2 with pac-ret): the kernel neither
 * single-steps nor emulates them, so no uprobe can sit there. (Capstone 4 does not decode
 * them at all; 5 does.) Debian's builds return by autiasp; ret, which it can. */
static bool authenticated_branch(const cs_insn *in)
{
	return !strncmp(in->mnemonic, "reta", 4) || !strncmp(in->mnemonic, "bra", 3);
}

static int decode_part(struct finder *f, csh cs, int fd, const struct region *r,
		       struct func_exits *out)
{
	uint64_t off, avail, size = r->end - r->start, addr = r->start;
	uint8_t *buf;
	const uint8_t *code;
	size_t left;
	cs_insn *in;
	int err = 0;

	if (file_offset(f->elf, r->start, &off, &avail) || avail < size)
		return fail(f, -ENOENT, "0x%llx is in no executable segment",
			    (unsigned long long)r->start);
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, size, (off_t)off) != (ssize_t)size) {
		free(buf);
		return fail(f, -EIO, "cannot read the code at 0x%llx", (unsigned long long)addr);
	}
	in = cs_malloc(cs);
	code = buf;
	left = size;
	while (!err && in && left) {
		uint64_t target;

		if (!cs_disasm_iter(cs, &code, &left, &addr, in)) {
			err = fail(f, -ENOEXEC, "cannot decode the instruction at 0x%llx",
				   (unsigned long long)addr);
			break;
		}
		if (f->machine == EM_AARCH64 && authenticated_branch(in)) {
			err = fail(f, -ENOTSUP, "%s at 0x%llx: an authenticated return or branch, "
				   "which arm64 uprobes cannot take", in->mnemonic,
				   (unsigned long long)in->address);
			break;
		}
		if (cs_insn_group(cs, in, CS_GRP_RET) ||
		    (f->machine == EM_AARCH64 && in->id == ARM64_INS_RET)) {
			err = add_exit(f, out, in->address);
			continue;
		}
		if (is_call(cs, in, f->machine) || !cs_insn_group(cs, in, CS_GRP_JUMP))
			continue;
		target = jump_target(in, f->machine);
		if (!target || !in_parts(f, target))
			err = out_jump(f, out, in->address, target);
	}
	if (!in)
		err = -ENOMEM;
	cs_free(in, 1);
	free(buf);
	return err;
}

int func_exits__find(const char *path, uint64_t vaddr, struct func_exits *out, char *why,
		     size_t why_size)
{
	struct finder f = { .why = why, .why_size = why_size };
	GElf_Ehdr eh;
	uint64_t size;
	csh cs = 0;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (why_size)
		why[0] = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(&f, -errno, "cannot open %s: %s", path, strerror(errno));
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || !gelf_getehdr(f.elf, &eh)) {
		err = fail(&f, -ENOEXEC, "not an ELF file");
		goto out;
	}
	f.machine = eh.e_machine;
	if (f.machine != EM_X86_64 && f.machine != EM_AARCH64) {
		err = fail(&f, -ENOTSUP, "machine %d is neither x86-64 nor arm64", f.machine);
		goto out;
	}
	size = symbol_size(f.elf, vaddr);
	if (!size) {
		err = fail(&f, -ENOENT, "no function symbol with a size at 0x%llx",
			   (unsigned long long)vaddr);
		goto out;
	}
	if (cs_open(f.machine == EM_X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64,
		    f.machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_ARM, &cs) != CS_ERR_OK) {
		err = fail(&f, -ENOMEM, "cannot open the disassembler");
		goto out;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	f.cfi = dwarf_getcfi_elf(f.elf);
	f.hdr = section(f.elf, ".eh_frame_hdr", &f.hdr_addr);
	f.frame = section(f.elf, ".eh_frame", &f.frame_addr);
	f.parts[f.nparts++] = (struct region){ vaddr, vaddr + size };
	err = 0;
	for (size_t i = 0; !err && i < f.nparts; i++)	/* parts found while decoding join */
		err = decode_part(&f, cs, fd, &f.parts[i], out);
	if (!err && !out->n)
		err = fail(&f, -ENOENT, "no exit found (a function that never returns?)");
out:
	if (cs)
		cs_close(&cs);
	if (f.cfi)
		dwarf_cfi_end(f.cfi);
	elf_end(f.elf);
	close(fd);
	return err;
}
