/* fuzz_cache — the on-disk cache reader (parity_support/cachefile.h) on arbitrary file contents:
 * it must refuse or return exactly the payload a matching header describes, never crash, never
 * over-read, never allocate more than its limit. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "parity_support/cachefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file("cache", "entry.bin", data, size);
  const char *why = NULL;
  size_t got = 0;
  uint64_t key = 0;
  if (size >= 16) memcpy(&key, data + 8, 8); /* let some inputs carry the right key */
  void *p = psup_cache_read(path, size >= 8 ? (const char *)data : "PARITYT1", key, 1 << 16, &got, &why);
  if (p) {
    if (got == 0 || got > (1 << 16) || got + 32 > size || memcmp(p, data + 32, got) != 0) abort();
    free(p);
  } else if (!why) {
    abort();
  }
  return 0;
}
