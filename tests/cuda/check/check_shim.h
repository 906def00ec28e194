/* check_shim.h — after emu_shim.h, what the checking executor changes in the kernels' host
 * compile: every __shared__ array goes into the section emu_shared behind a pad of
 * CHK_SHARED_PAD bytes (so an access past an array lands in a pad: out of bounds), and the kernel
 * table's entries (EMU_ENTRY) carry the argument count and which arguments are pointers, so a
 * report names the buffer by its argument. Compiled with -fsanitize=thread (no runtime):
 * check_hooks.c sees every load and store. */
#ifndef PARITY_CHECK_SHIM_H
#define PARITY_CHECK_SHIM_H

#include <type_traits>

#include "check.h"

#define CHK_SHARED_PAD 256
#define CHK_CAT2(a, b) a##b
#define CHK_CAT(a, b) CHK_CAT2(a, b)
#undef __shared__
#define __shared__                                                                                                \
  static __attribute__((section("emu_shared"), used)) char CHK_CAT(emu_shared_pad_, __COUNTER__)[CHK_SHARED_PAD]; \
  static __attribute__((section("emu_shared")))

template <typename... A>
constexpr unsigned chk_ptr_mask(void (*)(A...)) {
  unsigned m = 0, i = 0;
  ((m |= (std::is_pointer<A>::value ? 1u : 0u) << i++), ...);
  return m;
}
template <typename... A>
constexpr int chk_nargs(void (*)(A...)) {
  return (int)sizeof...(A);
}

/* the table emu_module.cpp defines is of check.h's chk_kernel_t */
#define emu_kernel_t chk_kernel_t
#undef EMU_ENTRY
#define EMU_ENTRY(name, barrier)                                                    \
  {#name,           [](void **p) { emu_tramp_of<name>(p, name); }, barrier, chk_nargs(name), chk_ptr_mask(name), \
   emu_psizes(name)},

#endif
