/* The identity-note reader (core/src/plugin_note.c) on real plugin files and on damaged copies:
 * the file is untrusted input, so truncations and flipped bytes must give "no note" (or a valid,
 * terminated note), never an over-read (the asan job runs this) or a crash. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct mem_t {
  unsigned char *data;
  uint64_t size;
} mem_t;

static int read_mem(void *src, uint64_t off, void *dst, size_t n) {
  mem_t *m = src;
  cr_assert(off <= m->size && n <= m->size - off, "the parser read [%llu, +%zu) of a %llu-byte file",
            (unsigned long long)off, n, (unsigned long long)m->size);
  memcpy(dst, m->data + off, n);
  return 0;
}

static mem_t load(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  mem_t m = {malloc((size_t)n), (uint64_t)n};
  cr_assert_eq(fread(m.data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return m;
}

static void assert_terminated(const parity_plugin_identity_t *id) {
  cr_assert(memchr(id->name, 0, sizeof id->name) && memchr(id->backend, 0, sizeof id->backend) &&
            memchr(id->version, 0, sizeof id->version));
}

Test(note, the_build_trees_plugins_state_who_they_are) {
  parity_plugin_identity_t id;
  cr_assert_eq(parity__identity_read(BUILD_PLUGIN_DIR "/parity-plugin-cpu.so", &id), 0);
  cr_assert_str_eq(id.name, "cpu");
  cr_assert_str_eq(id.backend, "cpu");
  cr_assert_eq(id.abi_major, PARITY_ABI_MAJOR);
  cr_assert_eq(parity__identity_read(FAKE_DIR "/parity-plugin-fakenormal.so", &id), 0);
  cr_assert_str_eq(id.name, "fakenormal");
}

Test(note, files_without_a_valid_note_have_none) {
  parity_plugin_identity_t id;
  cr_assert_eq(parity__identity_read(FAKE_DIR "/parity-plugin-garbage.so", &id), -1, "not ELF");
  cr_assert_eq(parity__identity_read(FAKE_DIR "/no-such-file.so", &id), -1);
  cr_assert_eq(parity__identity_read(FAKE_DIR, &id), -1, "a folder");
  mem_t m = load(FAKE_DIR "/parity-plugin-fakenormal.so");
  unsigned char *magic = memmem(m.data, m.size, PARITY_IDENTITY_MAGIC, sizeof PARITY_IDENTITY_MAGIC);
  cr_assert_not_null(magic);
  magic[0] ^= 1;
  cr_assert_eq(parity__identity_parse(read_mem, &m, m.size, &id), -1, "wrong magic");
  magic[0] ^= 1;
  parity_plugin_identity_t *note = (parity_plugin_identity_t *)magic;
  memset(note->name, 'N', sizeof note->name); /* no NUL: terminated by the reader */
  cr_assert_eq(parity__identity_parse(read_mem, &m, m.size, &id), 0);
  assert_terminated(&id);
  cr_assert_eq(strlen(id.name), sizeof id.name - 1);
  note->name[0] = 0;
  cr_assert_eq(parity__identity_parse(read_mem, &m, m.size, &id), -1, "an empty name");
  free(m.data);
}

/* every truncation, and every byte of the ELF header and the section table flipped four ways */
Test(note, damaged_files_never_read_outside_themselves) {
  mem_t m = load(FAKE_DIR "/parity-plugin-fakenormal.so");
  parity_plugin_identity_t id;
  int found = 0;
  for (uint64_t cut = 0; cut <= m.size; cut += cut < 128 ? 1 : 61) {
    mem_t t = {m.data, cut};
    if (parity__identity_parse(read_mem, &t, cut, &id) == 0) found++, assert_terminated(&id);
  }
  cr_assert_eq(parity__identity_parse(read_mem, &m, m.size, &id), 0);
  Elf64_Ehdr eh;
  memcpy(&eh, m.data, sizeof eh);
  uint64_t table = eh.e_shoff, table_end = table + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr);
  static const unsigned char flips[] = {0x01, 0x80, 0xff, 0x40};
  for (uint64_t b = 0; b < table_end; b = b + 1 == sizeof eh ? table : b + 1)
    for (size_t f = 0; f < sizeof flips; f++) {
      m.data[b] ^= flips[f];
      if (parity__identity_parse(read_mem, &m, m.size, &id) == 0) assert_terminated(&id);
      m.data[b] ^= flips[f];
    }
  free(m.data);
}
