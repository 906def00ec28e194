/* fuzz_idx — the IDX reader (tools/data/idx.c) on arbitrary file contents, gzip or plain: it must
 * refuse or return exactly what the header states, never crash, never allocate more than the
 * caller's limit. Size budget: the reader is given max_bytes = 1 MiB, and libFuzzer's
 * -malloc_limit_mb=16 / -rss_limit_mb=512 (set below unless given) turn any larger allocation,
 * such as a gzip bomb inflated whole, into a finding. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "fuzz_budget.h"
#include "idx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_budget(argc, argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file("idx", "data.gz", data, size);
  /* the last byte picks the caller's wishes: dimensions, a 28 x 28 requirement, an item limit */
  uint8_t sel = size ? data[size - 1] : 0;
  idx_want w = {.ndim = 1u + (sel & 3u), .max_items = (sel >> 2) & 3u, .max_bytes = 1u << 20};
  if (sel & 0x10) w.inner[1] = w.inner[2] = 28;
  idx_array a;
  char err[512] = "";
  if (idx_read(path, &w, &a, err, sizeof err) == 0) {
    uint64_t item = 1;
    for (uint32_t d = 1; d < a.ndim; d++) item *= a.dims[d];
    if (a.ndim != w.ndim || !a.data || a.size != (uint64_t)a.items * item || a.size > w.max_bytes ||
        a.items > a.dims[0] || (w.max_items && a.items > w.max_items))
      abort();
    idx_free(&a);
  } else if (!err[0] || a.data) {
    abort();
  }
  return 0;
}
