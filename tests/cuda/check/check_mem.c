/* check_mem.c — device memory of the checking driver: one reserved arena where every allocation
 * starts on a page and is followed by at least CHK_GAP bytes that belong to none, so a kernel
 * reading or writing past a buffer lands in a gap (mapped: the access happens, after it is
 * reported). A page table maps each page to its allocation (gap pages to the one before), and each
 * allocation gets its shadow words (one chk_word_t per 4 bytes) when a kernel first touches it;
 * buffers past CHK_SHADOW_MAX are checked for bounds only. Freed ranges are reused for allocations
 * of the same span, small ones with their pages and shadow (stale cells name older launches). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

#define CHK_PAGE 4096u
#define CHK_GAP (64u * 1024u)
#define CHK_ARENA ((size_t)256 << 30) /* address space only (MAP_NORESERVE) */
#define CHK_MAX_ALLOCS (1u << 20)
#define CHK_SHADOW_MAX ((size_t)16 << 20) /* larger buffers: bounds only (12 bytes of shadow per byte) */
#define CHK_KEEP_MAX ((size_t)1 << 20)    /* smaller freed ranges keep their pages and shadow for reuse */

typedef struct {
  uintptr_t start;
  size_t size, span; /* span: the pages it owns, gap included */
  chk_word_t *shadow;
  unsigned serial;
} alloc_t;

uintptr_t chk_arena_lo, chk_arena_hi;
static uint32_t *pages; /* page -> allocation index + 1 */
static alloc_t *allocs; /* indexed; free slots have start 0 */
static uint32_t nallocs, free_slot_hint;
static uintptr_t bump;
static size_t live;
static unsigned serials;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
  uintptr_t start;
  size_t span;
  chk_word_t *shadow; /* kept: its cells name older launches, so they read as empty */
} hole_t;
static hole_t *holes;
static size_t nholes, cap_holes;

static int init(void) {
  if (chk_arena_lo) return 0;
  void *a = mmap(NULL, CHK_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void *p = mmap(NULL, CHK_ARENA / CHK_PAGE * sizeof *pages, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  allocs = calloc(CHK_MAX_ALLOCS, sizeof *allocs);
  if (a == MAP_FAILED || p == MAP_FAILED || !allocs) return -1;
  pages = p;
  chk_arena_lo = bump = (uintptr_t)a;
  chk_arena_hi = (uintptr_t)a + CHK_ARENA;
  return 0;
}

static void map_pages(uintptr_t start, size_t span, uint32_t v) {
  size_t first = (start - chk_arena_lo) / CHK_PAGE, n = span / CHK_PAGE;
  for (size_t i = 0; i < n; i++) pages[first + i] = v;
}

static uintptr_t take_hole(size_t span, chk_word_t **shadow) {
  for (size_t i = 0; i < nholes; i++)
    if (holes[i].span == span) {
      uintptr_t s = holes[i].start;
      *shadow = holes[i].shadow;
      holes[i] = holes[--nholes];
      return s;
    }
  return 0;
}

static size_t shadow_bytes(size_t span) { return span / 4 * sizeof(chk_word_t); }

static uint32_t new_slot(void) {
  for (uint32_t i = 0; i < nallocs; i++) {
    uint32_t s = (free_slot_hint + i) % nallocs;
    if (!allocs[s].start) return free_slot_hint = s;
  }
  return nallocs < CHK_MAX_ALLOCS ? nallocs++ : UINT32_MAX;
}

int chk_mem_alloc(size_t n, void **out) {
  pthread_mutex_lock(&lock);
  int rc = -1;
  if (init() != 0) goto done;
  size_t span = (n + CHK_PAGE - 1) / CHK_PAGE * CHK_PAGE + CHK_GAP;
  uint32_t slot = new_slot();
  if (slot == UINT32_MAX) goto done;
  chk_word_t *shadow = NULL;
  uintptr_t s = take_hole(span, &shadow);
  if (!s) {
    if (chk_arena_hi - bump < span) goto done;
    s = bump;
    bump += span;
  }
  allocs[slot] = (alloc_t){.start = s, .size = n, .span = span, .shadow = shadow, .serial = ++serials};
  map_pages(s, span, slot + 1);
  live++;
  *out = (void *)s;
  rc = 0;
done:
  pthread_mutex_unlock(&lock);
  return rc;
}

int chk_mem_free(void *p) {
  uintptr_t a = (uintptr_t)p;
  pthread_mutex_lock(&lock);
  int rc = -1;
  if (!chk_arena_lo || a < chk_arena_lo || a >= chk_arena_hi) goto done;
  uint32_t v = pages[(a - chk_arena_lo) / CHK_PAGE];
  if (!v || allocs[v - 1].start != a) goto done;
  alloc_t *al = &allocs[v - 1];
  if (al->span > CHK_KEEP_MAX) { /* give the memory back */
    if (al->shadow) munmap(al->shadow, shadow_bytes(al->span));
    al->shadow = NULL;
    madvise((void *)a, al->span, MADV_DONTNEED);
  }
  map_pages(a, al->span, 0);
  if (nholes == cap_holes) {
    size_t cap = cap_holes ? 2 * cap_holes : 256;
    hole_t *h = realloc(holes, cap * sizeof *h);
    if (!h) goto forget; /* the range is lost to the arena, nothing else */
    holes = h;
    cap_holes = cap;
  }
  holes[nholes++] = (hole_t){a, al->span, al->shadow};
forget:
  memset(al, 0, sizeof *al);
  live--;
  rc = 0;
done:
  pthread_mutex_unlock(&lock);
  return rc;
}

size_t chk_mem_live(void) { return live; }

int chk_mem_describe(uintptr_t a, uintptr_t *start, size_t *size, unsigned *serial) {
  if (a < chk_arena_lo || a >= chk_arena_hi) return -1;
  uint32_t v = pages[(a - chk_arena_lo) / CHK_PAGE];
  if (!v) return -1;
  *start = allocs[v - 1].start;
  *size = allocs[v - 1].size;
  *serial = allocs[v - 1].serial;
  return 0;
}

static void out_of_bounds(uintptr_t a, unsigned size, int write, const void *pc) {
  chk_report_t r = {.kind = CHK_OOB,
                    .space = CHK_GLOBAL,
                    .write = write,
                    .block = chk_now.block,
                    .thread = chk_now.thread,
                    .pc = chk_pc(pc),
                    .addr = a,
                    .size = size};
  chk_report(&r);
}

/* a kernel's access to [a, a + size) inside the arena */
void chk_global_access(uintptr_t a, unsigned size, int write, const void *pc) {
  uint32_t v = pages[(a - chk_arena_lo) / CHK_PAGE];
  alloc_t *al = v ? &allocs[v - 1] : NULL;
  if (!al || a < al->start || a + size > al->start + al->size) {
    out_of_bounds(a, size, write, pc);
    return;
  }
  if (al->size > CHK_SHADOW_MAX) return;
  if (!al->shadow) {
    void *m =
        mmap(NULL, shadow_bytes(al->span), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return; /* unchecked rather than a crash */
    al->shadow = m;
  }
  size_t off = a - al->start;
  int32_t p = chk_pc(pc);
  for (size_t w = off / 4; w <= (off + size - 1) / 4; w++) {
    size_t lo = w * 4 > off ? w * 4 : off, hi = (w + 1) * 4 < off + size ? (w + 1) * 4 : off + size;
    unsigned mask = ((1u << (hi - lo)) - 1u) << (lo - w * 4);
    chk_word(&al->shadow[w], mask, write, CHK_GLOBAL, p, al->start + w * 4);
  }
}
