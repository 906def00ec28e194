/* check_fiber.h — fibers for the checking executor: one stack per thread of a block and a switch
 * that saves only the callee-saved registers and the floating-point control words (a kernel may
 * switch between fesetround and its restore: emu_shim.h's round-toward-zero conversions).
 * x86-64: a few instructions; elsewhere ucontext. */
#ifndef PARITY_CHECK_FIBER_H
#define PARITY_CHECK_FIBER_H

#include <stddef.h>

#if defined(__x86_64__)
typedef struct {
  void *sp;
} chk_fiber_t;
#else
#include <ucontext.h>
typedef struct {
  ucontext_t uc;
} chk_fiber_t;
#endif

/* prepares f to run entry() on the stack [stack, stack + size) when first switched to; entry
 * must never return (it switches away for good) */
void chk_fiber_make(chk_fiber_t *f, void *stack, size_t size, void (*entry)(void));
/* saves the running context into from and resumes to */
void chk_fiber_switch(chk_fiber_t *from, chk_fiber_t *to);

#endif
