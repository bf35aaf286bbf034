/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Functions of the shapes a C++ function leaves by, for tests/unit/test_func_exits.c (x86-64),
 * with unwind info as GCC writes it. The labels of the exits are hidden symbols, for the test to
 * find (and not reached through the PLT); the functions are exported. */
	.text
	.macro FUNC name
	.globl \name
	.type \name,@function
	.p2align 4
\name:
	.endm

/* one ret */
FUNC one_ret
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	mov %rsp,%rbp
	lea 1(%rdi),%rax
	pop %rbp
	.cfi_def_cfa_offset 8
	.globl one_ret_exit
	.hidden one_ret_exit
one_ret_exit:
	ret
	.cfi_endproc
	.size one_ret,.-one_ret

/* two rets and a tail call (frame torn down) */
FUNC two_rets_and_tail
	.cfi_startproc
	test %rdi,%rdi
	jz 1f
	.globl tail_exit_a
	.hidden tail_exit_a
tail_exit_a:
	ret
1:	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	mov %rdi,%rbx
	cmp $5,%rbx
	jne 2f
	pop %rbx
	.cfi_remember_state
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	.globl tail_exit_b
	.hidden tail_exit_b
tail_exit_b:
	ret
2:	.cfi_restore_state
	pop %rbx
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	.globl tail_exit_c
	.hidden tail_exit_c
tail_exit_c:
	jmp one_ret
	.cfi_endproc
	.size two_rets_and_tail,.-two_rets_and_tail

/* a jump into a split-off part with the frame set up; the part has an exit of its own and a
 * jump back into the body */
FUNC with_cold
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	test %rdi,%rdi
	jnz with_cold.cold
	.globl with_cold_back
	.hidden with_cold_back
with_cold_back:
	pop %rbp
	.cfi_def_cfa_offset 8
	.globl with_cold_exit
	.hidden with_cold_exit
with_cold_exit:
	ret
	.cfi_endproc
	.size with_cold,.-with_cold

	.section .text.unlikely
	.type with_cold.cold,@function
with_cold.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	cmp $1,%rdi
	jne with_cold_back
	pop %rbp
	.cfi_def_cfa_offset 8
	.globl cold_exit
	.hidden cold_exit
cold_exit:
	ret
	.cfi_endproc
	.size with_cold.cold,.-with_cold.cold
	.section .note.GNU-stack,"",@progbits
