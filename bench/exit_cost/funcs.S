/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* bench/exit_cost.sh: functions whose exits are probed the ways cirron-probe could probe a C++
 * function's exit: its ret, the instruction after its call site, a uretprobe, a tail jump.
 * Each a frame, a little work, one ret (x86-64). */
	.text
	.macro FUNC name
	.globl \name
	.type \name,@function
	.p2align 4
\name:
	.endm

FUNC f_push		/* entry: push %rbp (the kernel emulates push) */
	push %rbp
	mov %rsp,%rbp
	lea 1(%rdi),%rax
	pop %rbp
	.globl f_push_ret
	.type f_push_ret,@function
f_push_ret:
	ret
	.size f_push_ret,1
	.size f_push,.-f_push

FUNC f_endbr		/* entry: endbr64 (single-stepped out of line) */
	endbr64
	push %rbp
	mov %rsp,%rbp
	lea 1(%rdi),%rax
	pop %rbp
	ret
	.size f_endbr,.-f_endbr

FUNC f_tail		/* leaves by a tail jump: jmp rel32 to f_leaf */
	push %rbp
	mov %rsp,%rbp
	pop %rbp
	.globl f_tail_jmp
	.type f_tail_jmp,@function
f_tail_jmp:
	jmp.d32 f_leaf
	.size f_tail_jmp,5
	.size f_tail,.-f_tail

FUNC f_leaf
	lea 1(%rdi),%rax
	ret
	.size f_leaf,.-f_leaf

/* loop(n, fn): calls fn n times; the instruction after the call is a mov, as after most
 * call sites (single-stepped out of line) */
FUNC call_loop
	push %rbx
	push %r12
	push %r13
	mov %rdi,%rbx
	mov %rsi,%r12
	xor %r13d,%r13d
1:	mov %r13,%rdi
	call *%r12
	.globl after_call
	.type after_call,@function
after_call:
	mov %rax,%r13
	.size after_call,3
	dec %rbx
	jnz 1b
	mov %r13,%rax
	pop %r13
	pop %r12
	pop %rbx
	ret
	.size call_loop,.-call_loop
	.section .note.GNU-stack,"",@progbits
