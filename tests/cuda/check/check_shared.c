/* check_shared.c — the kernels' __shared__ arrays: check_shim.h puts each into the section
 * emu_shared behind a pad of CHK_SHARED_PAD bytes, so the section's bounds tell shared accesses
 * apart and a byte owned by no array (a pad) is out of bounds. The arrays' names and extents come
 * from this object's own ELF symbol table (check_elf.c); a read of a shared word that no thread of
 * the block has written is uninitialised. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_elf.h"

extern char __start_emu_shared[] __attribute__((weak));
extern char __stop_emu_shared[] __attribute__((weak));

uintptr_t chk_shared_lo, chk_shared_hi;

typedef struct {
  uint32_t launch, block;
  uint8_t mask; /* bytes of the word written in this block */
} init_t;

static chk_elf_array_t *arrays;
static size_t narrays;
static uint16_t *owner; /* per byte: array index + 1, 0 for a pad */
static chk_word_t *words;
static init_t *inits;

int chk_shared_init(char *msg, size_t n) {
  if (words || !__start_emu_shared || (uintptr_t)__stop_emu_shared <= (uintptr_t)__start_emu_shared) return 0;
  size_t size = (size_t)(__stop_emu_shared - __start_emu_shared), nw = (size + 3) / 4;
  owner = calloc(size, sizeof *owner);
  words = calloc(nw, sizeof *words);
  inits = calloc(nw, sizeof *inits);
  if (!owner || !words || !inits) {
    snprintf(msg, n, "out of memory for the shadow of %zu bytes of shared memory", size);
    return -1;
  }
  if (chk_elf_arrays((uintptr_t)__start_emu_shared, (uintptr_t)__stop_emu_shared, &arrays, &narrays) != 0 || !narrays ||
      narrays > 65535) {
    /* no symbols: the section as one array (out-of-bounds then only past its ends) */
    narrays = 1;
    arrays = calloc(1, sizeof *arrays);
    if (!arrays) return -1;
    arrays[0] = (chk_elf_array_t){(uintptr_t)__start_emu_shared, size, strdup("shared memory")};
  }
  for (size_t i = 0; i < narrays; i++)
    for (size_t b = 0; b < arrays[i].size; b++)
      owner[arrays[i].start - (uintptr_t)__start_emu_shared + b] = (uint16_t)(i + 1);
  chk_shared_lo = (uintptr_t)__start_emu_shared;
  chk_shared_hi = (uintptr_t)__stop_emu_shared;
  return 0;
}

const char *chk_shared_name(uintptr_t a, uintptr_t *start, size_t *size) {
  const chk_elf_array_t *best = NULL;
  for (size_t i = 0; i < narrays; i++) /* the array holding a, or the nearest one before it */
    if (arrays[i].start <= a && (!best || arrays[i].start > best->start)) best = &arrays[i];
  if (!best) return NULL;
  *start = best->start;
  *size = best->size;
  return best->name;
}

static void report(int kind, uintptr_t a, unsigned size, int write, const void *pc) {
  chk_report_t r = {.kind = kind,
                    .space = CHK_SHARED,
                    .write = write,
                    .block = chk_now.block,
                    .thread = chk_now.thread,
                    .pc = chk_pc(pc),
                    .addr = a,
                    .size = size};
  chk_report(&r);
}

void chk_shared_access(uintptr_t a, unsigned size, int write, const void *pc) {
  size_t off = a - chk_shared_lo;
  if (a + size > chk_shared_hi || !owner[off] || owner[off] != owner[off + size - 1]) {
    report(CHK_OOB, a, size, write, pc);
    return;
  }
  int32_t p = chk_pc(pc);
  for (size_t w = off / 4; w <= (off + size - 1) / 4; w++) {
    size_t lo = w * 4 > off ? w * 4 : off, hi = (w + 1) * 4 < off + size ? (w + 1) * 4 : off + size;
    unsigned mask = ((1u << (hi - lo)) - 1u) << (lo - w * 4);
    init_t *in = &inits[w];
    int mine = in->launch == chk_now.launch && in->block == chk_now.block;
    if (write) {
      if (!mine) *in = (init_t){chk_now.launch, chk_now.block, 0};
      in->mask |= (uint8_t)mask;
    } else if (!mine || (in->mask & mask) != mask) {
      report(CHK_UNINIT, chk_shared_lo + w * 4 + (lo - w * 4), (unsigned)(hi - lo), 0, pc);
    }
    chk_word(&words[w], mask, write, CHK_SHARED, p, chk_shared_lo + w * 4);
  }
}
