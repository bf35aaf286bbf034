/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* exit_shapes.S's functions in aarch64 code, for tests/unit/test_func_exits.c (which reads the
 * library, never runs it: built by the cross assembler on x86-64), with unwind info as GCC
 * writes it (the CFA is sp+0 at a call), pointer authentication as Debian builds with
 * -mbranch-protection=standard (paciasp .. autiasp; ret), and an authenticated return
 * (retaa, ARMv8.3 code), which no uprobe can take. The labels of the exits are hidden
 * symbols, for the test to find; the functions are exported. */
	.arch armv8.3-a
	.text
	.macro FUNC name
	.globl \name
	.type \name,%function
	.p2align 2
\name:
	.endm

/* one ret, after the epilogue and autiasp */
FUNC one_ret
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov x29, sp
	add x0, x0, #1
	ldp x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	.globl one_ret_exit
	.hidden one_ret_exit
one_ret_exit:
	ret
	.cfi_endproc
	.size one_ret, .-one_ret

/* two rets and a tail call (frame torn down); a conditional branch inside the body */
FUNC two_rets_and_tail
	.cfi_startproc
	cbnz x0, 1f
	.globl tail_exit_a
	.hidden tail_exit_a
tail_exit_a:
	ret
1:	stp x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	cmp x0, #5
	b.ne 2f
	ldp x29, x30, [sp], #16
	.cfi_remember_state
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	.globl tail_exit_b
	.hidden tail_exit_b
tail_exit_b:
	ret
2:	.cfi_restore_state
	ldp x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	.globl tail_exit_c
	.hidden tail_exit_c
tail_exit_c:
	b one_ret
	.cfi_endproc
	.size two_rets_and_tail, .-two_rets_and_tail

/* an authenticated return: refused, with where */
FUNC auth_ret
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	add x0, x0, #1
	.globl auth_ret_exit
	.hidden auth_ret_exit
auth_ret_exit:
	retaa
	.cfi_endproc
	.size auth_ret, .-auth_ret
	.section .note.GNU-stack,"",%progbits
