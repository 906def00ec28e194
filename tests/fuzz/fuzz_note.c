/* fuzz_note — the identity-note reader (core/src/plugin_note.c) on arbitrary files: it must never
 * read outside the file, and a note it accepts has terminated, non-empty name and backend. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

typedef struct mem_t {
  const uint8_t *data;
  uint64_t size;
} mem_t;

static int read_mem(void *src, uint64_t off, void *dst, size_t n) {
  const mem_t *m = src;
  if (off > m->size || n > m->size - off) __builtin_trap(); /* the parser must check first */
  memcpy(dst, m->data + off, n);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mem_t m = {data, size};
  parity_plugin_identity_t id;
  if (parity__identity_parse(read_mem, &m, size, &id) == 0 &&
      (!memchr(id.name, 0, sizeof id.name) || !memchr(id.backend, 0, sizeof id.backend) ||
       !memchr(id.version, 0, sizeof id.version) || !id.name[0] || !id.backend[0]))
    __builtin_trap();
  return 0;
}
