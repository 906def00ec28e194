/* emu_driver.h — the emulated half of the fake driver (included by fake_libcuda.c when built with
 * FAKE_CUDA_EMULATE): modules are told apart by their entries and ".u32 parity_cu_class = n",
 * functions are the host-compiled kernels of emu_module.cpp, and a launch runs every block in
 * turn, its threads one after another, or as fibers (ucontext) switching at __syncthreads. */
#include <stdio.h>
#include <ucontext.h>

#ifdef FAKE_CUDA_CHECK /* the checking executor's tables (check/check.h) */
typedef chk_kernel_t emu_kernel_t;
#else
typedef struct emu_kernel_t {
  const char *name;
  void (*run)(void **params);
  int barrier;
  int nargs;
  const unsigned short *psizes; /* emu_shim.h: each argument's size, then 0 */
} emu_kernel_t;
#endif

extern const emu_kernel_t emu_kernels_0_0[], emu_kernels_0_1[], emu_kernels_0_2[], emu_kernels_0_3[];
extern const emu_kernel_t emu_kernels_1_0[], emu_kernels_1_1[], emu_kernels_1_2[], emu_kernels_1_3[];
extern const emu_kernel_t emu_kernels_2_0[], emu_kernels_2_1[], emu_kernels_3_0[], emu_kernels_3_1[];
extern const emu_kernel_t emu_kernels_4_0[], emu_kernels_4_1[], emu_kernels_5_0[], emu_kernels_5_1[];

static const emu_kernel_t *const emu_tables[6][4] = {
    {emu_kernels_0_0, emu_kernels_0_1, emu_kernels_0_2, emu_kernels_0_3},
    {emu_kernels_1_0, emu_kernels_1_1, emu_kernels_1_2, emu_kernels_1_3},
    {emu_kernels_2_0, emu_kernels_2_1, NULL, NULL},
    {emu_kernels_3_0, emu_kernels_3_1, NULL, NULL},
    {emu_kernels_4_0, emu_kernels_4_1, NULL, NULL},
    {emu_kernels_5_0, emu_kernels_5_1, NULL, NULL},
};

/* the module of a PTX text: a handle to its kernel table */
static CUmodule emu_module(const char *ptx) {
  /* ".u32 parity_cu_class = 2;", or "... parity_cu_class;" for 0 */
  const char *c = strstr(ptx, ".u32 parity_cu_class"), *e = strstr(ptx, ".entry ");
  if (!c || !e) return NULL;
  c += 20;
  int cls = strncmp(c, " = ", 3) == 0 ? atoi(c + 3) : 0;
  e += 7;
  int fam = strncmp(e, "ew_", 3) == 0     ? 0
            : strncmp(e, "red_", 4) == 0  ? 1
            : strncmp(e, "smx_", 4) == 0  ? 2
            : strncmp(e, "mm_", 3) == 0   ? 3
            : strncmp(e, "pool_", 5) == 0 ? 5
                                          : 4;
  if (cls < 0 || cls > 3 || !emu_tables[fam][cls]) return NULL;
  return (CUmodule)&emu_tables[fam][cls];
}

static const void *emu_find(CUmodule m, const char *name) {
  const emu_kernel_t *t = *(const emu_kernel_t *const *)m;
  for (; t->name; t++)
    if (strcmp(t->name, name) == 0) return t;
  return NULL;
}

#ifndef FAKE_CUDA_CHECK /* the checking executor launches its own way (check/check_driver.h) */
typedef struct emu_dim3 {
  unsigned x, y, z;
} emu_dim3;
EXPORT emu_dim3 emu_blockIdx, emu_blockDim, emu_threadIdx, emu_gridDim;

#define EMU_MAX_THREADS 1024
#define EMU_STACK (256 * 1024)
static ucontext_t emu_sched, emu_fib[EMU_MAX_THREADS];
static char *emu_stacks;
static int emu_done[EMU_MAX_THREADS], emu_cur;
static const emu_kernel_t *emu_k;
static void **emu_params;
static emu_dim3 emu_tid[EMU_MAX_THREADS];

/* the fake driver is dlclosed at plugin shutdown: give the fiber stacks back first */
__attribute__((destructor)) static void emu_free_stacks(void) {
  free(emu_stacks);
  emu_stacks = NULL;
}

EXPORT void emu_syncthreads(void) { swapcontext(&emu_fib[emu_cur], &emu_sched); }

static void emu_fiber(void) {
  emu_k->run(emu_params);
  emu_done[emu_cur] = 1; /* returns to emu_sched through uc_link */
}

/* one block's threads as fibers, round-robin from barrier to barrier */
static void emu_run_fibers(const emu_kernel_t *k, void **params, unsigned n) {
  static unsigned t, left; /* static: survive the context switches (no clobbering) */
  if (!emu_stacks && !(emu_stacks = malloc((size_t)EMU_MAX_THREADS * EMU_STACK))) abort();
  emu_k = k;
  emu_params = params;
  for (t = 0; t < n; t++) {
    memset(&emu_fib[t], 0, sizeof emu_fib[t]);
    getcontext(&emu_fib[t]);
    emu_fib[t].uc_stack.ss_sp = emu_stacks + (size_t)t * EMU_STACK;
    emu_fib[t].uc_stack.ss_size = EMU_STACK;
    emu_fib[t].uc_link = &emu_sched;
    makecontext(&emu_fib[t], emu_fiber, 0);
    emu_done[t] = 0;
  }
  for (left = n; left;)
    for (t = 0; t < n; t++) {
      if (emu_done[t]) continue;
      emu_cur = (int)t;
      emu_threadIdx = emu_tid[t];
      swapcontext(&emu_sched, &emu_fib[t]);
      if (emu_done[t]) left--;
    }
}

static void emu_launch(const void *kernel, const unsigned *grid, const unsigned *block, void **params) {
  const emu_kernel_t *k = kernel;
  emu_gridDim = (emu_dim3){grid[0], grid[1], grid[2]};
  emu_blockDim = (emu_dim3){block[0], block[1], block[2]};
  unsigned n = block[0] * block[1] * block[2];
  for (unsigned b = 0; b < grid[0]; b++) {
    emu_blockIdx = (emu_dim3){b, 0, 0};
    unsigned t = 0;
    for (unsigned z = 0; z < block[2]; z++)
      for (unsigned y = 0; y < block[1]; y++)
        for (unsigned x = 0; x < block[0]; x++) emu_tid[t++] = (emu_dim3){x, y, z};
    if (!k->barrier) {
      for (t = 0; t < n; t++) {
        emu_threadIdx = emu_tid[t];
        k->run(params);
      }
      continue;
    }
    emu_run_fibers(k, params, n);
  }
}
#endif
