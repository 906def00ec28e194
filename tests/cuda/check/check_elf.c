/* check_elf.c — see check_elf.h. */
#define _GNU_SOURCE
#include "check_elf.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status); /* libstdc++ */

/* "_ZZL6mm_fwd7kp_mm_tPKhS1_PhE2ta" -> "mm_fwd::ta": the function without its parameters */
static char *readable(const char *sym) {
  int st = -1;
  char *d = __cxa_demangle(sym, NULL, NULL, &st);
  if (!d || st != 0) {
    free(d);
    return strdup(sym);
  }
  char *open = strchr(d, '('), *close = strstr(d, ")::");
  if (open && close && close > open) memmove(open, close + 1, strlen(close + 1) + 1);
  if (!strncmp(d, "void ", 5)) memmove(d, d + 5, strlen(d + 5) + 1); /* a template's return type */
  return d;
}

static int collect(const unsigned char *f, size_t size, uintptr_t bias, uintptr_t lo, uintptr_t hi,
                   chk_elf_array_t **out, size_t *count) {
  const Elf64_Ehdr *eh = (const void *)f;
  if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
    return -1;
  const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr *strs = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size) return -1;
    const Elf64_Sym *sym = (const void *)(f + sh[i].sh_offset);
    size_t n = sh[i].sh_size / sizeof *sym, got = 0;
    chk_elf_array_t *a = calloc(n ? n : 1, sizeof *a);
    if (!a) return -1;
    for (size_t k = 0; k < n; k++) {
      uintptr_t at = (uintptr_t)sym[k].st_value + bias;
      if (ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT || !sym[k].st_size || at < lo || at >= hi ||
          sym[k].st_name >= strs->sh_size)
        continue;
      const char *name = (const char *)f + strs->sh_offset + sym[k].st_name;
      if (strstr(name, "emu_shared_pad")) continue;
      a[got++] = (chk_elf_array_t){at, (size_t)sym[k].st_size, readable(name)};
    }
    *out = a;
    *count = got;
    return 0;
  }
  return -1;
}

int chk_elf_arrays(uintptr_t lo, uintptr_t hi, chk_elf_array_t **out, size_t *count) {
  Dl_info info;
  if (!dladdr((void *)&chk_elf_arrays, &info) || !info.dli_fname) return -1;
  int fd = open(info.dli_fname[0] ? info.dli_fname : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  const Elf64_Ehdr *eh = m;
  uintptr_t bias = (size_t)st.st_size >= sizeof *eh && eh->e_type == ET_DYN ? (uintptr_t)info.dli_fbase : 0;
  int rc = collect(m, (size_t)st.st_size, bias, lo, hi, out, count);
  munmap(m, (size_t)st.st_size);
  return rc;
}
