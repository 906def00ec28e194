/* fuzz_file.h — the fuzzers of file readers write each input to one file in a folder of their own
 * (made on first use under /tmp) and read it back through the reader under test. */
#ifndef PARITY_FUZZ_FILE_H
#define PARITY_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[96], fuzz_path[256];

/* at exit: the file, and the folder if nothing else was left in it */
static void fuzz_file_cleanup(void) {
  remove(fuzz_path);
  rmdir(fuzz_dir);
}

/* data as the contents of <folder>/<name>; folder "/tmp/parity-fuzz-<tag>-XXXXXX", removed at exit;
 * the path, kept */
static const char *fuzz_file(const char *tag, const char *name, const uint8_t *data, size_t size) {
  char *path = fuzz_path;
  if (!path[0]) {
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/parity-fuzz-%s-XXXXXX", tag);
    if (!mkdtemp(fuzz_dir)) abort();
    snprintf(path, sizeof fuzz_path, "%s/%s", fuzz_dir, name);
    atexit(fuzz_file_cleanup);
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  return path;
}

#endif
