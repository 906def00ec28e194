/* check_sched.c — the block scheduler of the checking executor: every thread of a block is a
 * fiber with its own stack; a seeded generator picks which runnable fiber goes next at every
 * switch point (chk_maybe_switch: shared and global accesses) and at every barrier; a barrier
 * releases when every live thread waits at it, and one that some thread passed by (exited, or
 * waits at another barrier) is reported as divergent. A barrier orders the memories it fences
 * (chk_now.epoch, .gepoch): __syncthreads both, an OpenCL barrier those of its flags. Blocks run
 * one after another: the shadow state treats accesses of different blocks of a launch as unordered
 * whatever the order. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "check_fiber.h"

#define CHK_STACK (256u * 1024u)
#define CHK_GUARD 4096u

typedef struct {
  unsigned x, y, z;
} chk_dim3;
/* the CUDA built-in variables of the kernels (emu_shim.h's extern "C" names) */
chk_dim3 emu_blockIdx, emu_blockDim, emu_threadIdx, emu_gridDim;

chk_now_t chk_now;
int chk_active;
uintptr_t chk_stacks_lo, chk_stacks_hi;

enum { F_RUN, F_WAIT, F_DONE };
static chk_fiber_t main_fiber, fib[CHK_MAX_THREADS];
static chk_dim3 tid[CHK_MAX_THREADS];
static unsigned char state[CHK_MAX_THREADS];
static int32_t bar_pc[CHK_MAX_THREADS];
static unsigned char bar_fences[CHK_MAX_THREADS];
static int run_list[CHK_MAX_THREADS], run_pos[CHK_MAX_THREADS];
static int nthreads, nrun, nwait, cur, last_done;
static uint64_t rng;

uint64_t chk_rand(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void chk_seed(uint64_t launch) {
  rng = chk_config.seed * 0x2545f4914f6cdd1dull ^ launch;
  (void)chk_rand();
}

int chk_stacks_init(void) {
  if (chk_stacks_lo) return 0;
  size_t each = CHK_STACK + CHK_GUARD, all = each * CHK_MAX_THREADS;
  char *m = mmap(NULL, all, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return -1;
  for (unsigned i = 0; i < CHK_MAX_THREADS; i++) mprotect(m + i * each, CHK_GUARD, PROT_NONE); /* overflow: a fault */
  chk_stacks_lo = (uintptr_t)m;
  chk_stacks_hi = (uintptr_t)m + all;
  return 0;
}

static void run_remove(int f) {
  int p = run_pos[f], last = run_list[--nrun];
  run_list[p] = last;
  run_pos[last] = p;
}

static void run_add(int f) {
  run_pos[f] = nrun;
  run_list[nrun++] = f;
}

/* leaves the running fiber (from) for fiber to, or for the launch (to < 0) */
static void switch_to(int to) {
  chk_fiber_t *from = &fib[cur];
  if (to < 0) {
    chk_fiber_switch(from, &main_fiber);
    return;
  }
  cur = to;
  chk_now.thread = (uint16_t)to;
  emu_threadIdx = tid[to];
  chk_stats.switches++;
  chk_fiber_switch(from, &fib[to]);
}

static int pick(void) { return run_list[chk_rand() % (uint64_t)nrun]; }

void chk_maybe_switch(void) {
  if (nrun < 2 || chk_rand() % chk_config.switch_every) return;
  int next = pick();
  if (next != cur) switch_to(next);
}

static void divergent(int waiting, int other, int exited) {
  chk_report_t r = {.kind = CHK_DIVERGENT,
                    .space = CHK_SHARED,
                    .block = chk_now.block,
                    .thread = (uint32_t)waiting,
                    .other_block = chk_now.block,
                    .other_thread = (uint32_t)other,
                    .pc = bar_pc[waiting],
                    .other_pc = exited ? 0 : bar_pc[other],
                    .other_write = exited ? -1 : 0};
  chk_report(&r);
}

/* every live thread waits: check they wait at one barrier, then let them all go on, past the
 * memories every one of them fenced */
static void release(void) {
  int first = -1;
  unsigned fences = CHK_FENCE_SHARED | CHK_FENCE_GLOBAL;
  for (int f = 0; f < nthreads; f++) {
    if (state[f] != F_WAIT) continue;
    fences &= bar_fences[f];
    if (first < 0)
      first = f;
    else if (bar_pc[f] != bar_pc[first]) {
      divergent(first, f, 0);
      break;
    }
  }
  if (first >= 0 && last_done >= 0) divergent(first, last_done, 1);
  if (fences & CHK_FENCE_SHARED) chk_now.epoch++;
  if (fences & CHK_FENCE_GLOBAL) chk_now.gepoch++;
  chk_stats.barriers++;
  for (int f = 0; f < nthreads && nwait; f++)
    if (state[f] == F_WAIT) {
      state[f] = F_RUN;
      nwait--;
      run_add(f);
    }
}

static void barrier(const void *pc, unsigned fences) {
  state[cur] = F_WAIT;
  bar_pc[cur] = chk_pc(pc);
  bar_fences[cur] = (unsigned char)fences;
  run_remove(cur);
  nwait++;
  if (!nrun) release();
  int next = pick();
  if (next != cur) switch_to(next);
}

/* __syncthreads() of the kernels (emu_shim.h) */
void emu_syncthreads(void) { barrier(__builtin_return_address(0), CHK_FENCE_SHARED | CHK_FENCE_GLOBAL); }
/* OpenCL's barrier(flags) (tests/opencl/check/ocl_shim.h) */
void chk_barrier(unsigned fences) { barrier(__builtin_return_address(0), fences); }

static void fiber_entry(void) {
  chk_now.kernel->run(chk_now.params);
  state[cur] = F_DONE;
  last_done = cur;
  run_remove(cur);
  if (!nrun && nwait) release(); /* they wait for a thread that has exited */
  switch_to(nrun ? pick() : -1);
}

/* one block: n fibers, run until every one has returned */
void chk_run_block(unsigned n) {
  const unsigned *d = chk_now.block_dim;
  unsigned t = 0;
  for (unsigned z = 0; z < d[2]; z++)
    for (unsigned y = 0; y < d[1]; y++)
      for (unsigned x = 0; x < d[0]; x++) tid[t++] = (chk_dim3){x, y, z};
  size_t each = CHK_STACK + CHK_GUARD;
  nthreads = (int)n;
  nrun = nwait = 0;
  last_done = -1;
  for (t = 0; t < n; t++) {
    chk_fiber_make(&fib[t], (char *)chk_stacks_lo + t * each + CHK_GUARD, CHK_STACK, fiber_entry);
    state[t] = F_RUN;
    run_add((int)t);
  }
  chk_now.epoch = chk_now.gepoch = 0;
  cur = pick();
  chk_now.thread = (uint16_t)cur;
  emu_threadIdx = tid[cur];
  chk_fiber_switch(&main_fiber, &fib[cur]);
}
