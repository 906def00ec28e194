/* psup_advise_hugepages (parity_support/hugepages.h): a large block's aligned interior becomes
 * eligible for transparent huge pages, as the kernel reports in /proc/self/smaps; small blocks
 * and NULL are left alone. Skipped where THP is off ("never") or smaps has no THPeligible line. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "parity_support/hugepages.h"

/* THPeligible of the mapping that holds address a: 1, 0, or -1 when not reported */
static int thp_eligible(uintptr_t a) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0, result = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && strncmp(line, "THPeligible:", 12) == 0) {
      result = atoi(line + 12);
      break;
    }
  }
  fclose(f);
  return result;
}

static int thp_available(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  char s[128] = "";
  int ok = fgets(s, sizeof s, f) != NULL && strstr(s, "[never]") == NULL;
  fclose(f);
  return ok;
}

Test(hugepages, a_large_block_becomes_eligible_and_keeps_its_contents) {
  if (!thp_available()) cr_skip_test("transparent huge pages are off here");
  size_t bytes = 16u << 20;
  /* a private mapping of its own, so no other advice (malloc's) is mixed in */
  unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  p[0] = 7, p[bytes - 1] = 9;
  uintptr_t mid = (uintptr_t)p + bytes / 2;
  int before = thp_eligible(mid);
  if (before != 0) cr_skip_test("THP is not in madvise mode here (THPeligible %d before advice)", before);
  psup_advise_hugepages(p, bytes);
  cr_assert_eq(thp_eligible(mid), 1, "the interior was not advised");
  cr_assert(p[0] == 7 && p[bytes - 1] == 9);
  munmap(p, bytes);
}

Test(hugepages, small_blocks_and_null_are_left_alone) {
  if (!thp_available()) cr_skip_test("transparent huge pages are off here");
  size_t bytes = 3u << 20; /* under 4 MiB */
  unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  int before = thp_eligible((uintptr_t)p);
  if (before != 0) cr_skip_test("THP is not in madvise mode here");
  psup_advise_hugepages(p, bytes);
  psup_advise_hugepages(NULL, 1u << 30);
  cr_assert_eq(thp_eligible((uintptr_t)p), 0);
  munmap(p, bytes);
}
