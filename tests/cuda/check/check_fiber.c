/* check_fiber.c — see check_fiber.h. */
#define _GNU_SOURCE
#include "check_fiber.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
/* chk_fiber_switch(from = rdi, to = rsi): push the callee-saved registers and MXCSR / the x87
 * control word, store rsp in from->sp, load to->sp, pop the same in reverse and return into it */
__asm__(
    ".text\n"
    ".globl chk_fiber_switch\n"
    ".hidden chk_fiber_switch\n"
    ".type chk_fiber_switch,@function\n"
    "chk_fiber_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq (%rsi), %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size chk_fiber_switch, .-chk_fiber_switch\n");

void chk_fiber_make(chk_fiber_t *f, void *stack, size_t size, void (*entry)(void)) {
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *p = (uint64_t *)top;
  /* from the top: a zero return address for entry (entry starts as if called: rsp % 16 == 8),
   * entry as the switch's return address, rbp rbx r12..r15 zero, then the control words */
  *--p = 0;
  *--p = (uint64_t)(uintptr_t)entry;
  for (int i = 0; i < 6; i++) *--p = 0;
  uint32_t mxcsr;
  uint16_t cw;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  --p;
  memcpy((char *)p, &mxcsr, 4);
  memcpy((char *)p + 4, &cw, 2);
  f->sp = p;
}
#else
void chk_fiber_make(chk_fiber_t *f, void *stack, size_t size, void (*entry)(void)) {
  memset(&f->uc, 0, sizeof f->uc);
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = stack;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = NULL;
  makecontext(&f->uc, entry, 0);
}

void chk_fiber_switch(chk_fiber_t *from, chk_fiber_t *to) { swapcontext(&from->uc, &to->uc); }
#endif
