/* fuzz_safetensors — the safetensors reader (tools/data/safetensors.c) on arbitrary file contents:
 * it must refuse with a message or return tensors that lie inside the data it read, never crash,
 * never over-read. Size budget: fuzz_budget.h (-malloc_limit_mb=16, -rss_limit_mb=512), so a
 * reader that believed a header's sizes before checking them against the file is a finding. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "fuzz_budget.h"
#include "parity/safetensors.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_budget(argc, argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file("st", "w.safetensors", data, size);
  parity_st_file s;
  char err[512] = "";
  if (parity_st_read(path, &s, err, sizeof err) != 0) {
    if (!err[0] || s.header || s.body) abort();
    return 0;
  }
  if (s.size != size || s.data_start > size) abort();
  uint64_t buf = s.size - s.data_start;
  for (uint32_t i = 0; i < s.count; i++) {
    const parity_st_tensor *t = &s.tensors[i];
    if (t->begin > t->end || t->end > buf || parity_st_find(&s, t->name) != t) abort();
    if (t->end > t->begin && memcmp(parity_st_data(&s, t), data + s.data_start + t->begin, t->end - t->begin)) abort();
    uint64_t first = 0;
    if (parity_st_nonfinite(&s, t, &first) && first >= (t->end - t->begin)) abort();
  }
  for (uint32_t i = 0; i < s.meta_count; i++)
    if (parity_st_metadata(&s, s.meta_keys[i]) == NULL) abort();
  parity_st_free(&s);
  return 0;
}
