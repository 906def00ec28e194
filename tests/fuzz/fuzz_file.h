/* fuzz_file.h — the fuzzers of file readers write each input to one file in a folder of their own
 * (made on first use under /tmp) and read it back through the reader under test. */
#ifndef PARITY_FUZZ_FILE_H
#define PARITY_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* data as the contents of <folder>/<name>; folder "/tmp/parity-fuzz-<tag>-XXXXXX"; the path, kept */
static const char *fuzz_file(const char *tag, const char *name, const uint8_t *data, size_t size) {
  static char path[256];
  if (!path[0]) {
    char dir[96];
    snprintf(dir, sizeof dir, "/tmp/parity-fuzz-%s-XXXXXX", tag);
    if (!mkdtemp(dir)) abort();
    snprintf(path, sizeof path, "%s/%s", dir, name);
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  return path;
}

#endif
