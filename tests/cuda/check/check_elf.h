/* check_elf.h — the checking executor's own ELF file, read once: the shared arrays (symbols of
 * the section emu_shared) with their extents and readable names. */
#ifndef PARITY_CHECK_ELF_H
#define PARITY_CHECK_ELF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uintptr_t start;
  size_t size;
  char *name; /* "mm_fwd::ta" */
} chk_elf_array_t;

/* every object symbol inside [lo, hi) of this executable or shared object, pads excluded (their
 * names begin with emu_shared_pad); 0, or -1 when the file or its symbol table cannot be read */
int chk_elf_arrays(uintptr_t lo, uintptr_t hi, chk_elf_array_t **out, size_t *count);

#endif
