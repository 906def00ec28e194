/* hugepages.c — see hugepages.h. */
#define _DEFAULT_SOURCE
#include "parity_support/hugepages.h"

#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

void psup_advise_hugepages(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (!p || bytes < 2 * huge) return;
  uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}
