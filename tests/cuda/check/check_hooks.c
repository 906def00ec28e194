/* check_hooks.c — the entry points -fsanitize=thread instrumentation calls (the ThreadSanitizer
 * runtime is not linked: these are the whole runtime). Every load and store of the kernels comes
 * here with its address; the fiber stacks are ignored, an access to the shared arrays or to the
 * device memory arena is checked and is a switch point of the scheduler, anything else (the
 * launch's parameters, constant tables) is ignored. */
#include "check.h"

static inline __attribute__((always_inline)) void access(const void *p, unsigned size, int write, const void *pc) {
  if (!chk_active) return;
  uintptr_t a = (uintptr_t)p;
  if (a - chk_stacks_lo < chk_stacks_hi - chk_stacks_lo) return;
  if (a - chk_shared_lo < chk_shared_hi - chk_shared_lo)
    chk_shared_access(a, size, write, pc);
  else if (a - chk_arena_lo < chk_arena_hi - chk_arena_lo)
    chk_global_access(a, size, write, pc);
  else
    return;
  chk_maybe_switch();
}

#define CHK_HOOKS(n)                                                                                \
  void __tsan_read##n(void *p) { access(p, n, 0, __builtin_return_address(0)); }                    \
  void __tsan_write##n(void *p) { access(p, n, 1, __builtin_return_address(0)); }                   \
  void __tsan_unaligned_read##n(void *p) { access(p, n, 0, __builtin_return_address(0)); }          \
  void __tsan_unaligned_write##n(void *p) { access(p, n, 1, __builtin_return_address(0)); }         \
  void __tsan_volatile_read##n(void *p) { access(p, n, 0, __builtin_return_address(0)); }           \
  void __tsan_volatile_write##n(void *p) { access(p, n, 1, __builtin_return_address(0)); }          \
  void __tsan_unaligned_volatile_read##n(void *p) { access(p, n, 0, __builtin_return_address(0)); } \
  void __tsan_unaligned_volatile_write##n(void *p) { access(p, n, 1, __builtin_return_address(0)); }

/* declared here: no header declares them */
#define CHK_DECL(n)                                \
  void __tsan_read##n(void *p);                    \
  void __tsan_write##n(void *p);                   \
  void __tsan_unaligned_read##n(void *p);          \
  void __tsan_unaligned_write##n(void *p);         \
  void __tsan_volatile_read##n(void *p);           \
  void __tsan_volatile_write##n(void *p);          \
  void __tsan_unaligned_volatile_read##n(void *p); \
  void __tsan_unaligned_volatile_write##n(void *p);
CHK_DECL(1)
CHK_DECL(2)
CHK_DECL(4)
CHK_DECL(8)
CHK_DECL(16)
CHK_HOOKS(1)
CHK_HOOKS(2)
CHK_HOOKS(4)
CHK_HOOKS(8)
CHK_HOOKS(16)

void __tsan_read_range(void *p, unsigned long n);
void __tsan_write_range(void *p, unsigned long n);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_init(void);

/* a range (an aggregate copy): its first and last byte are enough for bounds, each word for races */
void __tsan_read_range(void *p, unsigned long n) {
  for (unsigned long i = 0; i < n; i += 4)
    access((char *)p + i, n - i < 4 ? (unsigned)(n - i) : 4, 0, __builtin_return_address(0));
}
void __tsan_write_range(void *p, unsigned long n) {
  for (unsigned long i = 0; i < n; i += 4)
    access((char *)p + i, n - i < 4 ? (unsigned)(n - i) : 4, 1, __builtin_return_address(0));
}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_init(void) {}
