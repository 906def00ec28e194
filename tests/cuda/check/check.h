/* check.h — the checking executor for the CUDA plugin's kernels (tests/cuda/check, README.md
 * there): the kernels compiled as host C++ with -fsanitize=thread but without the ThreadSanitizer
 * runtime, so every load and store calls the __tsan_* hooks of check_hooks.c; every thread of a
 * block is a fiber (check_fiber.c) that a seeded scheduler (check_sched.c) switches at barriers
 * and at shared/global accesses; a shadow state per 4-byte word of device memory (check_mem.c)
 * and of the shared arrays (check_shared.c) reports races, out-of-bounds and uninitialised
 * accesses and divergent barriers (check_shadow.c, check_report.c). C11. */
#ifndef PARITY_CHECK_H
#define PARITY_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHK_MAX_THREADS 1024
#define CHK_MAX_BLOCKS (1u << 22) /* grid.x a checked launch may have */

/* a kernel of a check module table (check_shim.h's EMU_ENTRY): ptr_mask bit i when argument i is a
 * pointer (a buffer, named in reports as "argument i") */
typedef struct chk_kernel_t {
  const char *name;
  void (*run)(void **params);
  int barrier;
  int nargs;
  unsigned ptr_mask;
  const unsigned short *psizes; /* each argument's size, then 0 (a graph capture copies them) */
  unsigned reqd_wg[3];          /* OpenCL's reqd_work_group_size (ocl_shim.h's OCL_ENTRY); 0, 0, 0: none (CUDA) */
} chk_kernel_t;

/* ---- the words of reports and settings: CUDA's by default; the OpenCL checking executor
 * (tests/opencl/check) sets its own before its first launch ---- */
typedef struct {
  const char *tool;                              /* report prefix: "cuda-check" */
  const char *block, *blocks;                    /* "block", "blocks" (OpenCL: "work-group") */
  const char *thread, *threads;                  /* "thread", "threads" (OpenCL: "work-item") */
  const char *shared;                            /* the memory of a block: "shared" (OpenCL: "local") */
  const char *seed_env, *switch_env, *stats_env; /* PARITY_CUDA_CHECK_SEED, _SWITCH, CUDA_CHECK_STATS */
} chk_words_t;
extern chk_words_t chk_words;

/* ---- configuration (chk_words.seed_env, .switch_env) ---- */
typedef struct {
  uint64_t seed;
  unsigned switch_every; /* a switch point switches with probability 1/switch_every */
} chk_config_t;
extern chk_config_t chk_config;
int chk_configure(char *msg, size_t n); /* 0, or -1 with the reason in msg */

/* ---- device memory: an arena of allocations with unmapped-from-the-shadow gaps ---- */
int chk_mem_alloc(size_t n, void **out); /* 0, or -1 when the arena is full */
int chk_mem_free(void *p);               /* 0, or -1 when p is no allocation */
size_t chk_mem_live(void);

/* ---- launches ---- */
/* runs every block of the launch under the checker; returns the number of reports (0: clean),
 * -1 when the launch cannot run (message in chk_message()) */
int chk_launch(const chk_kernel_t *k, const unsigned grid[3], const unsigned block[3], void **params);
const char *chk_message(void); /* the last launch's reports, formatted; "" when clean */
const char *chk_failure(void); /* why the last launch could not run */

/* counters since the process started (the conformance wrapper checks that the checker ran) */
typedef struct {
  uint64_t launches, blocks, accesses, switches, barriers, reports;
} chk_stats_t;
extern chk_stats_t chk_stats;
void chk_stats_write(void); /* appended to the file CUDA_CHECK_STATS names, when set */

/* ---- internal: shared by the check_*.c files ---- */
enum { CHK_GLOBAL = 0, CHK_SHARED = 1 };
enum { CHK_RACE = 1, CHK_OOB, CHK_UNINIT, CHK_DIVERGENT };

typedef struct {
  uint32_t launch; /* launch serial; 0: never accessed */
  uint32_t block;
  uint16_t thread; /* bits 0..10 the thread, 12..15 the bytes of the word accessed */
  uint16_t epoch;  /* the block's barrier count, for the cell's memory, at the access (chk_now_t) */
  int32_t pc;      /* the access's return address, from chk_pc_anchor */
} chk_cell_t;
typedef struct {
  chk_cell_t w, r1, r2; /* last write; up to two reads since it */
} chk_word_t;

/* the running thread; epoch and gepoch count the block's barriers that fenced shared (local) and
 * global memory: __syncthreads fences both, OpenCL's barrier(flags) those its flags name */
typedef struct {
  uint32_t launch, block;
  uint16_t thread, epoch, gepoch;
  const chk_kernel_t *kernel;
  void **params;
  unsigned block_dim[3];
} chk_now_t;
extern chk_now_t chk_now;
extern int chk_active; /* a launch runs: hooks check */

/* fibers and the scheduler */
int chk_stacks_init(void);
void chk_seed(uint64_t launch);
void chk_run_block(unsigned n);
void chk_maybe_switch(void);
enum { CHK_FENCE_SHARED = 1, CHK_FENCE_GLOBAL = 2 };
void chk_barrier(unsigned fences); /* a barrier of the block fencing these memories (emu_syncthreads: both) */
uint64_t chk_rand(void);

/* classification ranges, set by chk_mem_init and chk_shared_init */
extern uintptr_t chk_arena_lo, chk_arena_hi, chk_shared_lo, chk_shared_hi, chk_stacks_lo, chk_stacks_hi;
void chk_global_access(uintptr_t a, unsigned size, int write, const void *pc);
void chk_shared_access(uintptr_t a, unsigned size, int write, const void *pc);
int chk_shared_init(char *msg, size_t n);
const char *chk_shared_name(uintptr_t a, uintptr_t *start, size_t *size); /* the array holding a */
/* a word's shadow check and update (check_shadow.c) */
void chk_word(chk_word_t *w, unsigned mask, int write, int space, int32_t pc, uintptr_t a);
int32_t chk_pc(const void *pc);
const void *chk_pc_addr(int32_t pc);
/* the allocation around an arena address: its start, size and the launch argument naming it */
int chk_mem_describe(uintptr_t a, uintptr_t *start, size_t *size, unsigned *serial);

/* reports (check_report.c): recorded during the launch, formatted after it */
typedef struct {
  int kind, space, write, other_write;
  uint32_t block, thread, other_block, other_thread;
  int32_t pc, other_pc;
  uintptr_t addr;
  unsigned size;
  unsigned count; /* reports of this kind at these lines in the launch (check_report.c) */
} chk_report_t;
void chk_report(const chk_report_t *r);
void chk_reports_begin(void);
int chk_reports_end(void); /* formats chk_message(); returns the count */

#ifdef __cplusplus
}
#endif
#endif
