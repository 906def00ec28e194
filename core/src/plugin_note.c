/* plugin_note.c — a plugin's identity note (abi/parity_plugin.h) read from its ELF file without
 * loading it.
 *
 * The file is untrusted input: every offset and size is checked against the file's size before
 * it is read, counts are capped, and strings are terminated here. Anything unexpected (not a
 * 64-bit little-endian ELF file, no note, a note of the wrong size or magic, an empty name) is
 * "no note": the loader then identifies the plugin by loading it, as for a plugin built before
 * the note existed. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_SECTIONS 4096
#define MAX_NAMES (1u << 20) /* section-name table */

static int in_file(uint64_t size, uint64_t off, uint64_t n) { return off <= size && n <= size - off; }

int parity__identity_parse(parity__read_at_fn read_at, void *src, uint64_t size, parity_plugin_identity_t *out) {
  Elf64_Ehdr eh;
  if (!in_file(size, 0, sizeof eh) || read_at(src, 0, &eh, sizeof eh) != 0) return -1;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > MAX_SECTIONS || eh.e_shstrndx >= eh.e_shnum)
    return -1;
  uint64_t table = (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr);
  if (!in_file(size, eh.e_shoff, table)) return -1;
  Elf64_Shdr names;
  if (read_at(src, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof names, &names, sizeof names) != 0 ||
      names.sh_type != SHT_STRTAB || names.sh_size == 0 || names.sh_size > MAX_NAMES ||
      !in_file(size, names.sh_offset, names.sh_size))
    return -1;
  static const char want[] = PARITY_IDENTITY_SECTION;
  for (uint16_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    if (read_at(src, eh.e_shoff + (uint64_t)i * sizeof sh, &sh, sizeof sh) != 0) return -1;
    if (sh.sh_type != SHT_PROGBITS || sh.sh_name >= names.sh_size || names.sh_size - sh.sh_name < sizeof want) continue;
    char name[sizeof want];
    if (read_at(src, names.sh_offset + sh.sh_name, name, sizeof name) != 0) return -1;
    if (memcmp(name, want, sizeof want) != 0) continue;
    /* the note: at least today's struct (a newer, larger one is read up to what this host knows) */
    if (sh.sh_size < sizeof *out || !in_file(size, sh.sh_offset, sizeof *out)) return -1;
    if (read_at(src, sh.sh_offset, out, sizeof *out) != 0) return -1;
    if (memcmp(out->magic, PARITY_IDENTITY_MAGIC, sizeof PARITY_IDENTITY_MAGIC) != 0 ||
        out->struct_size < sizeof *out || out->struct_size > sh.sh_size)
      return -1;
    out->name[sizeof out->name - 1] = out->backend[sizeof out->backend - 1] = 0;
    out->version[sizeof out->version - 1] = 0;
    return out->name[0] && out->backend[0] ? 0 : -1;
  }
  return -1;
}

static int read_fd(void *src, uint64_t off, void *dst, size_t n) {
  int fd = *(int *)src;
  unsigned char *p = dst;
  while (n) {
    ssize_t got = pread(fd, p, n, (off_t)off);
    if (got <= 0) return -1;
    p += got, off += (uint64_t)got, n -= (size_t)got;
  }
  return 0;
}

int parity__identity_read(const char *path, parity_plugin_identity_t *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  int rc =
      fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? parity__identity_parse(read_fd, &fd, (uint64_t)st.st_size, out) : -1;
  close(fd);
  return rc;
}
