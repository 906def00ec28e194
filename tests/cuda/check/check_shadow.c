/* check_shadow.c — one shadow word (chk_word_t) per 4 bytes of device or shared memory: the last
 * write and up to two reads since it, each with launch, block, thread, the block's count of the
 * barriers that fenced that memory (epoch: chk_now.epoch for shared, chk_now.gepoch for global), the
 * bytes touched and the access's code address. Two accesses conflict when their bytes overlap, at
 * least one writes, and nothing orders them: different threads of one block between the same two
 * barriers fencing their memory, or different blocks of one launch (no barrier joins blocks).
 * Launches are ordered by the stream. For shared memory only this block's accesses count (the
 * arrays are the block's own; the emulation reuses them block after block). */
#include "check.h"

/* the module's own code: pc offsets are taken from here (one shared object, well within 2 GiB) */
static void chk_pc_anchor(void) {}

int32_t chk_pc(const void *pc) { return (int32_t)((intptr_t)pc - (intptr_t)&chk_pc_anchor); }
const void *chk_pc_addr(int32_t pc) { return (const void *)((intptr_t)&chk_pc_anchor + pc); }

#define THREAD_BITS 0x07ffu
#define MASK_SHIFT 12

static inline unsigned cell_mask(const chk_cell_t *c) { return (unsigned)c->thread >> MASK_SHIFT; }
static inline unsigned cell_thread(const chk_cell_t *c) { return c->thread & THREAD_BITS; }

/* the running thread's barrier count for this memory */
static inline uint16_t epoch(int space) { return space == CHK_GLOBAL ? chk_now.gepoch : chk_now.epoch; }

/* the cell records an access that still matters to this one */
static inline int live(const chk_cell_t *c, int space) {
  return c->launch == chk_now.launch && (space == CHK_GLOBAL || c->block == chk_now.block);
}

/* live and not ordered before the running thread's access */
static inline int concurrent(const chk_cell_t *c, int space, unsigned mask) {
  if (!live(c, space) || !(cell_mask(c) & mask)) return 0;
  if (c->block != chk_now.block) return 1;
  return c->epoch == epoch(space) && cell_thread(c) != chk_now.thread;
}

static inline void set(chk_cell_t *c, unsigned mask, int space, int32_t pc) {
  c->launch = chk_now.launch;
  c->block = chk_now.block;
  c->thread = (uint16_t)(chk_now.thread | (mask << MASK_SHIFT));
  c->epoch = epoch(space);
  c->pc = pc;
}

/* the same thread in the same interval: one access for the checks to come */
static inline int same(const chk_cell_t *c, int space) {
  return live(c, space) && c->block == chk_now.block && c->epoch == epoch(space) && cell_thread(c) == chk_now.thread;
}

static void race(const chk_cell_t *other, int other_write, int write, int space, int32_t pc, uintptr_t a,
                 unsigned mask) {
  unsigned lo = (unsigned)__builtin_ctz(mask);
  chk_report_t r = {.kind = CHK_RACE,
                    .space = space,
                    .write = write,
                    .other_write = other_write,
                    .block = chk_now.block,
                    .thread = chk_now.thread,
                    .other_block = other->block,
                    .other_thread = cell_thread(other),
                    .pc = pc,
                    .other_pc = other->pc,
                    .addr = a + lo,
                    .size = (unsigned)__builtin_popcount(mask)};
  chk_report(&r);
}

static void record_read(chk_word_t *w, unsigned mask, int space, int32_t pc) {
  if (same(&w->r1, space)) {
    w->r1.thread |= (uint16_t)(mask << MASK_SHIFT);
    return;
  }
  if (same(&w->r2, space)) {
    w->r2.thread |= (uint16_t)(mask << MASK_SHIFT);
    return;
  }
  /* keep a read that a later write of this block would race with: another block's, or another
   * thread's in this interval; an older interval's read of this block is ordered before */
  int keep1 = live(&w->r1, space) && (w->r1.block != chk_now.block || w->r1.epoch == epoch(space));
  int keep2 = live(&w->r2, space) && (w->r2.block != chk_now.block || w->r2.epoch == epoch(space));
  if (!keep1)
    set(&w->r1, mask, space, pc);
  else if (!keep2)
    set(&w->r2, mask, space, pc);
}

void chk_word(chk_word_t *w, unsigned mask, int write, int space, int32_t pc, uintptr_t a) {
  chk_stats.accesses++;
  if (concurrent(&w->w, space, mask)) race(&w->w, 1, write, space, pc, a, mask & cell_mask(&w->w));
  if (!write) {
    record_read(w, mask, space, pc);
    return;
  }
  if (concurrent(&w->r1, space, mask))
    race(&w->r1, 0, 1, space, pc, a, mask & cell_mask(&w->r1));
  else if (concurrent(&w->r2, space, mask))
    race(&w->r2, 0, 1, space, pc, a, mask & cell_mask(&w->r2));
  if (same(&w->w, space))
    w->w.thread |= (uint16_t)(mask << MASK_SHIFT);
  else
    set(&w->w, mask, space, pc);
  w->r1.launch = w->r2.launch = 0; /* reads before this write are ordered before it, or reported */
}
