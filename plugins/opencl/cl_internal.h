/* cl_internal.h — shared by the OpenCL plugin's files. Each kernel family lives in its own .c
 * file (host side) and .k.h file (device side, plugins/kernels); device, queue, memory, program
 * cache and error mapping live apart from the kernels.
 *
 * Device-side structs (iter_t, red_t, ...) are passed to kernels by value; they are defined once,
 * for this code and the kernels, in plugins/kernels/kernel_params.h (every field's offset checked). */
#ifndef PARITY_OCL_INTERNAL_H
#define PARITY_OCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdint.h>

#include "kernel_params.h"
#include "kp_host.h"
#include "parity_plugin.h"
#include "parity_support/contract.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/gpu_kit.h"
#include "parity_support/ops.h"

/* ---- errors (cl_errors.c: pure tables, no OpenCL calls) ---------------------------------- */
/* "CL_OUT_OF_RESOURCES", or NULL for a code OpenCL does not define. */
const char *ocl_error_name(cl_int err);
/* The parity status an OpenCL error maps to. */
int32_t ocl_error_status(cl_int err);

/* The plugin's host kit (parity_support/gpu_kit.h: messages, device slots, dispatch, buffer
 * checks); cl_plugin.c fills it. Messages are written without the "opencl: " prefix: the kit
 * adds it. */
extern psup_kit_t ocl_kit;
#define ocl_fail(status, ...) psup_kit_fail(&ocl_kit, (status), __VA_ARGS__)
#define ocl_log(level, ...) psup_kit_log(&ocl_kit, (level), __VA_ARGS__)
/* Report "opencl: <call>: CL_NAME" (plus what was being done) and return the mapped status. */
int32_t ocl_cl_fail(cl_int err, const char *call, const char *what);
#define OCL_CHECK(err, call, what) PSUP_KIT_CHECK(cl_int, err, CL_SUCCESS, ocl_cl_fail(r_, call, what))

/* ---- compute classes and kernels ---------------------------------------------------------- */
/* The kernel sources are compiled once per compute class (see plugins/kernels/kernel_common.k.h). */
typedef enum { OCL_CLASS_F = 0, OCL_CLASS_D, OCL_CLASS_I, OCL_CLASS_L, OCL_CLASS_COUNT } ocl_class_t;

/* Class that computes `dtype` (F for f32/f16/bf16, I for i32/bool, ...). */
/* the classes and names of plugins/kernels/host (kp_names.c) */
#define ocl_class_of kp_class_of
#define ocl_class_name kp_class_name

/* Every kernel and the family file (index into the embedded sources after kernel_common.k.h) it lives in:
 * plugins/kernels/host/kp_kernels.h, one list with the CUDA plugin (OCL_K_<name> is KP_K_<name>).
 * Each kernel of each class is its own program, built on first use (cl_cache.c). */
enum {
  OCL_SRC_EW = 1,
  OCL_SRC_RED,
  OCL_SRC_SMX,
  OCL_SRC_MM,
  OCL_SRC_CONV,
  OCL_SRC_POOL,
  OCL_SRC_BUILTINS,
  OCL_SRC_PMATHF
};
#define OCL_KERNEL_LIST(X) KP_KERNEL_LIST(X) /* X(kernel, family) */

typedef enum {
#define OCL_X_(n, src) OCL_K_##n,
  OCL_KERNEL_LIST(OCL_X_)
#undef OCL_X_
      OCL_K_COUNT
} ocl_kernel_id_t;

/* "ew_binary" */
#define ocl_kernel_name kp_kernel_name
/* The kernel built in the same program as `kid` in variant `v` (-1: none). A forward kernel and
 * the backward one a gradient runs with it (same variant: op and dtype) share a program, so the
 * pair pays the driver's fixed cost per program once (PoCL: ~80 ms, parsing its OpenCL C header
 * twice). The program is named after the pair's first kernel (ocl_program_kernel). */
typedef uint32_t ocl_var_t;
int ocl_kernel_partner(int kid, ocl_var_t v);
int ocl_program_kernel(int kid, ocl_var_t v);

/* A kernel variant: the compute class, and the op and dtypes the program fixes at build time
 * (0: left to the run-time arguments; op -1 is reduce's internal tie count). A plain class is
 * the variant that fixes nothing. */
#define OCL_VAR(cls, op, dt, dt2) \
  ((ocl_var_t)(cls) | ((ocl_var_t)(op)&0xfffu) << 4 | ((ocl_var_t)(dt)&0xffu) << 16 | ((ocl_var_t)(dt2)&0xffu) << 24)
static inline int ocl_var_class(ocl_var_t v) { return (int)(v & 15u); }
static inline int ocl_var_op(ocl_var_t v) {
  int op = (int)((v >> 4) & 0xfffu);
  return op == 0xfff ? -1 : op;
}
static inline int ocl_var_dt(ocl_var_t v) { return (int)((v >> 16) & 0xffu); }
static inline int ocl_var_dt2(ocl_var_t v) { return (int)((v >> 24) & 0xffu); }

/* ---- devices, buffers ---------------------------------------------------------------------- */
/* What init() learned about one device (read-only afterwards). */
typedef struct ocl_slot_t {
  psup_kit_slot_t kit; /* info record and capabilities (parity_support/gpu_kit.h) */
  cl_platform_id platform;
  cl_device_id id;
  int has_fp64, cpu_like, correct_divide;
  int fma32;    /* CL_FP_FMA for f32: fma() is a hardware instruction */
  int c12;      /* OpenCL C 1.2 or later: built with -cl-std=CL1.2 (a smaller header to parse than 3.0's) */
  int builtins; /* programs declare their builtins (kernels/builtins.cl) instead of the driver's header */
  /* PoCL: it keeps compiled kernels on disk itself unless POCL_KERNEL_CACHE=0, and a binary asked of
   * it costs another compile of every kernel, so PARITY_OPENCL_PROGRAM_CACHE=auto leaves parity's
   * program cache off there (cl_device.c, README: Program cache) */
  int pocl;
  /* float class: division, sqrt, rsqrt and reciprocal through pmathf (pf_div, pf_sqrt, ...), not
   * the built-ins: the device does not report CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (the built-ins
   * may be 2.5-3 ulp off), or PARITY_OPENCL_EXACT_DIV=lib. an unknown knob value: knob_error
   * (device open fails, naming it). */
  int lib_div;
  char knob_error[200]; /* a PARITY_OPENCL_* value that does not parse: device open refuses with it */
  char cache_key[512];  /* device name, platform and driver version: part of the cache key */
} ocl_slot_t;

const ocl_slot_t *ocl_slot(uint32_t index);

struct parity_plugin_buffer_t {
  cl_mem mem;
  uint64_t size;
};

/* The argument values last set on a kernel, so that a launch sets only what changed
 * (clSetKernelArg copies and allocates in some drivers: PoCL). A cl_mem argument is a handle: the
 * same value names the same buffer only while no buffer has been released since it was set (a
 * released handle's address may come back as another buffer, and a driver may resolve the handle
 * when the argument is set), so the cache forgets everything when ocl_mem_epoch moves. */
#define OCL_MAX_ARGS 12
#define OCL_ARG_CACHE_BYTES 528
typedef struct ocl_argcache_t {
  uint64_t epoch;              /* ocl_mem_epoch when these values were set */
  uint16_t size[OCL_MAX_ARGS]; /* 0: not known */
  unsigned char value[OCL_MAX_ARGS][OCL_ARG_CACHE_BYTES];
} ocl_argcache_t;

/* One kernel variant: its program, the kernel object and its work-group size. */
typedef struct ocl_prog_t {
  cl_program prog; /* NULL: free slot of the table */
  cl_kernel kern;
  ocl_argcache_t *args; /* NULL until the first launch */
  size_t local;         /* 1-D work-group size: 1 on the contiguous layout (CPU devices) */
  uint64_t key;         /* cache key (cl_cache.c) */
  ocl_var_t var;
  int kid;
  int save_pending;  /* built from source: write the binary once its first launch has finished */
  int declared;      /* built with builtins.cl (1) or the driver's header (0) */
  int quick;         /* built with -cl-opt-disable (the quick tier: cl_programs.c) */
  int tier_failed;   /* quick programs: the optimised build failed, keep this one */
  uint32_t launches; /* launches of the quick program so far */
} ocl_prog_t;

/* Compile tiers (cl_programs.c): PARITY_OPENCL_TIER=auto|tiered|full|quick. */
enum { OCL_TIER_FULL, OCL_TIER_QUICK, OCL_TIER_TIERED };
#define OCL_TIER_BIG (1ull << 18) /* a launch of this much work gets the optimised program */
#define OCL_TIER_LAUNCHES 256u    /* the launch of a quick program that replaces it by the optimised one */
#define OCL_QUICK_SPECIALISED 2   /* quick variants of a kernel and class with their own program (cl_programs.c) */

struct parity_plugin_device_t {
  uint32_t index;
  const ocl_slot_t *slot;
  cl_context ctx;
  cl_command_queue queue;
  ocl_prog_t *progs; /* open-addressing table by (kernel, variant), built on first use */
  uint32_t prog_cap, prog_count;
  uint32_t saves_pending; /* programs built from source whose binary is not yet on disk */
  char cache_dir[900];    /* empty: no cache folder */
  uint32_t units;         /* compute units */
  size_t max_local;       /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  uint64_t max_groups;    /* cap on work-groups per 1-D launch; kernels loop past it */
  int contiguous;         /* 1: each work-item takes a contiguous run (CPU devices); 0: strided */
  uint32_t grain;         /* contiguous layout: fewest elements per work-item of an elementwise kernel */
  int tier;               /* OCL_TIER_*: which programs launches get (cl_programs.c) */
  cl_mem scratch;         /* grows on demand; in-order queue makes reuse safe */
  uint64_t scratch_size;
  int scratch_mode;      /* PARITY_OPENCL_SCRATCH: PSUP_SCRATCH_* (parity_support/gpu_kit.h) */
  struct ocl_rec_t *rec; /* non-NULL while a plan records (cl_plan.c): launches are recorded, not enqueued */
  void **staging;        /* host copies of queued writes, freed once the queue has drained */
  uint32_t staging_count, staging_cap;
  uint64_t staging_bytes;
};

/* Debugging and test knobs, read at device open (both layouts are correct everywhere):
 *   PARITY_OPENCL_WORK_LAYOUT=contiguous|strided  how work-items share items (default: contiguous
 *                                                 on CPU devices, strided on GPUs)
 *   PARITY_OPENCL_MAX_GROUPS=n                    cap work-groups per launch (kernels loop)
 *   PARITY_OPENCL_GRAIN=n                         contiguous layout: fewest elements per work-item
 *                                                 of an elementwise kernel (default 4096)
 *   PARITY_OPENCL_BUILD_OPTIONS="..."             appended to the program build options
 *   PARITY_OPENCL_NO_FP64=1 (read at init)        treat every device as lacking cl_khr_fp64
 *   PARITY_OPENCL_EXACT_DIV=auto|lib|builtin      float division/sqrt: pmathf where the device
 *     (read at init)                              lacks correctly rounded ones (auto), always
 *                                                 (lib: tests the path on PoCL), never (builtin)
 *   PARITY_OPENCL_BUILD_LOG=file                  append "<source|cache> <class> <kernel>" per
 *                                                 program built (tests count compiles with it) */

/* Build p->kid in variant p->var and tier p->quick (program and kernel object), from the on-disk
 * binary cache when it holds it, else from source unless `cache_only` (then p->prog stays NULL
 * when the cache lacks it). cl_cache.c. */
int32_t ocl_build_kernel(parity_plugin_device_t *dev, ocl_prog_t *p, int cache_only);
/* The kernel object p->kid of the built program p->prog, and its work-group size. */
int32_t ocl_make_kernel(parity_plugin_device_t *dev, ocl_prog_t *p);
/* Write the binaries of programs built from source since the last write, after the queue has
 * drained: by then each kernel has run once, and drivers that compile at first launch (PoCL)
 * include that compiled code in the binary. Asking PoCL for a binary also compiles a generic
 * version of every kernel in it (about as long as the first launch's compile), so the writes
 * wait for device close (`force`), or for OCL_SAVE_BATCH pending programs at a read or
 * synchronize, off the path to the first results. */
#define OCL_SAVE_BATCH 64
void ocl_cache_flush(parity_plugin_device_t *dev, int force);

/* Kernel `kid` in variant `v` for a launch of about `work` units (0: a query before one), built
 * on first use in the tier the work and PARITY_OPENCL_TIER choose; a quick program may be
 * replaced by the optimised one here (cl_programs.c). */
int32_t ocl_program(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint64_t work, ocl_prog_t **out);
int32_t ocl_kernel(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint64_t work, cl_kernel *out);
/* The tier mode PARITY_OPENCL_TIER asks for on this device (fails on an unknown value). */
int32_t ocl_tier_mode(const ocl_slot_t *s, int *out);
/* Release every built program and kernel of the device. */
void ocl_programs_release(parity_plugin_device_t *dev);

/* A kernel argument: size and address of the value (cl_mem handles by address too); `mem` marks
 * a cl_mem (set again once any buffer has been released: ocl_argcache_t). */
typedef struct ocl_arg_t {
  size_t size;
  const void *value;
  int mem;
} ocl_arg_t;
#define OCL_ARG(v) ((ocl_arg_t){sizeof(v), &(v), _Generic((v), cl_mem : 1, default : 0)})

/* Enqueue a 1-D kernel over `items` work items (> 0; FOR_ITEMS in the kernels), about `work`
 * units of work in all (the tier choice: cl_programs.c). Kernel
 * arguments are args[0], then n and per (chosen here), then args[1..nargs-1]. */
int32_t ocl_run_items(parity_plugin_device_t *dev, ocl_var_t v, int kid, int64_t items, uint64_t work, uint32_t nargs,
                      const ocl_arg_t *args);
/* The same with the kernel's arguments a parameter struct, then the cl_mem of `nops` tensors
 * (NULL for a NULL one). */
int32_t ocl_run_ops(parity_plugin_device_t *dev, ocl_var_t v, int kid, int64_t items, uint64_t work, ocl_arg_t params,
                    uint32_t nops, const parity_tensor_desc_t *const *t);
/* Same for kernels whose first argument is an iteration (elementwise, reduce backward): it carries
 * n and per (set here) with the op and dtypes, so a launch passes 1 + nargs arguments (PoCL
 * copies every argument at each enqueue: fewer is cheaper). */
int32_t ocl_run_iter(parity_plugin_device_t *dev, ocl_var_t v, int kid, kp_iter_cl_t *it, int64_t items, uint32_t nargs,
                     const ocl_arg_t *args);
/* Set args and enqueue with explicit geometry. */
int32_t ocl_run(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint32_t dims, const size_t *global,
                const size_t *local, uint32_t nargs, const ocl_arg_t *args);

/* Every cl_mem the plugin releases goes through ocl_mem_release, which moves ocl_mem_epoch (process
 * wide: a buffer may be freed without its device): cached cl_mem kernel arguments expire. */
extern _Atomic uint64_t ocl_mem_epoch;
static inline void ocl_mem_release(cl_mem m) {
  __atomic_fetch_add(&ocl_mem_epoch, 1, __ATOMIC_RELAXED);
  clReleaseMemObject(m);
}

/* A device scratch buffer of at least `bytes` (contents undefined). */
int32_t ocl_scratch(parity_plugin_device_t *dev, uint64_t bytes, cl_mem *out);

/* A copy between buffers (clEnqueueCopyBuffer), or recorded while a plan records. */
int32_t ocl_copy(parity_plugin_device_t *dev, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off, size_t bytes,
                 const char *what);

/* ---- prepared plans (cl_plan.c) --------------------------------------------------------------- */
/* While dev->rec is set (between the kit's plans.begin and plans.end) the launch functions record
 * instead of enqueueing: a launch of p's kernel (a kernel object of the plan's own, created from
 * p->prog with every argument set once), a fill, a copy, a write of bytes the plan keeps, and
 * scratch memory the plan owns. */
int32_t ocl_rec_launch(parity_plugin_device_t *dev, const ocl_prog_t *p, int kid, uint32_t dims, const size_t *global,
                       const size_t *local, uint32_t nargs, const ocl_arg_t *args);
int32_t ocl_rec_fill(parity_plugin_device_t *dev, cl_mem m, size_t off, size_t size, const void *pattern,
                     uint32_t psize);
int32_t ocl_rec_copy(parity_plugin_device_t *dev, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off, size_t bytes);
int32_t ocl_rec_write(parity_plugin_device_t *dev, cl_mem m, size_t off, const void *src, size_t size);
int32_t ocl_rec_scratch(parity_plugin_device_t *dev, uint64_t bytes, cl_mem *out);
/* The kit's plan functions (psup_kit_plans_t). */
int32_t ocl_plan_begin(parity_plugin_device_t *dev);
int32_t ocl_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out);
int32_t ocl_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
void ocl_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);

/* The entries the kit does not write: device open/close (cl_device.c), buffers, transfers and
 * synchronize (cl_memory.c, called by the kit after its argument checks), the function table
 * (cl_plugin.c). */
PSUP_KIT_DECLARE_PLUGIN(ocl);
/* memory and queue: cl_memory.c */
/* After the queue has drained (clFinish or a blocking read): free the write staging copies (and
 * write the cache files once many are pending: ocl_cache_flush). */
void ocl_queue_drained(parity_plugin_device_t *dev);

/* ---- operands (the kernels' strided iteration: kp_iter_cl_build, kp_host.h) ------------------- */
/* The cl_mem of a tensor (NULL for a NULL tensor). */
cl_mem ocl_mem_of(const parity_tensor_desc_t *t);

/* ---- kernel families ------------------------------------------------------------------------ */
/* Entered through the host kit (cl_plugin.c's ocl_kit), which checks the operand contract and
 * element-aligned offsets first; matmul adds a device limit of its own. */
PSUP_KIT_DECLARE_FAMILIES(ocl);
int32_t ocl_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);
/* max_pool2d and avg_pool2d (pool.c), which the CONV2D family's entries (conv.c) hand on */
int32_t ocl_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t ocl_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d);

#endif
