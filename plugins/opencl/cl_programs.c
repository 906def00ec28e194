/* cl_programs.c — the per-device table of built kernel variants, and the two compile tiers.
 *
 * A kernel variant is built the first time a launch needs it (cl_cache.c builds one program,
 * from the on-disk cache or from source). On a CPU device (PoCL) most of a cold start is the
 * driver's optimiser: a program built with -cl-opt-disable compiles in about half the time and
 * runs its kernels 3-10x slower, which costs nothing that matters on the small tensors of a first
 * step. So the table has two tiers (PARITY_OPENCL_TIER, read at device open):
 *   tiered  a launch of less than OCL_TIER_BIG units of work gets the quick program (unless the
 *           optimised one is already built or in the cache); the quick program's
 *           OCL_TIER_LAUNCHES-th launch, or a launch of OCL_TIER_BIG units, builds the optimised
 *           one and swaps it in (its forward/backward partner too). Default on CPU devices.
 *           PoCL compiles under locks that a second context or thread does not get around (a
 *           background compiler in a context of its own made the cold start slower, 1.8 -> 2.9 s),
 *           so the optimised build runs on the launch thread, once a kernel is in use.
 *   full    optimised programs only. Default on GPUs.
 *   quick   quick programs only (tests: the quick tier must agree with the optimised one).
 * Both tiers compile the same source with the same floating-point options (no contraction, no
 * relaxed math; -cl-opt-disable changes how fast the code runs, never what it computes), so the
 * results are the same bits: tests/opencl/test_tiers.c compares them. A unit of work is about one
 * element operation: a launch's items for elementwise kernels, M*N*K for matmul, the terms of a
 * reduction (the caller's estimate). Work 0 asks for the entry as it is: no counting and no
 * swap (a launch right after a query that counted it, or one whose geometry the query set). */
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "cl_internal.h"

static uint32_t prog_hash(ocl_var_t v, int kid) {
  uint32_t h = v * 2654435761u ^ (uint32_t)kid * 40503u;
  return h ^ (h >> 15);
}

/* The table slot of (kid, v): its entry, or the free slot where it belongs. */
static ocl_prog_t *prog_slot(ocl_prog_t *t, uint32_t cap, ocl_var_t v, int kid) {
  for (uint32_t i = prog_hash(v, kid) & (cap - 1);; i = (i + 1) & (cap - 1))
    if (!t[i].prog || (t[i].kid == kid && t[i].var == v)) return &t[i];
}

static int32_t prog_grow(parity_plugin_device_t *dev) {
  uint32_t cap = dev->prog_cap ? dev->prog_cap * 2 : 64;
  ocl_prog_t *t = calloc(cap, sizeof *t);
  if (!t) return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "out of host memory for the kernel table");
  for (uint32_t i = 0; i < dev->prog_cap; i++)
    if (dev->progs[i].prog) *prog_slot(t, cap, dev->progs[i].var, dev->progs[i].kid) = dev->progs[i];
  free(dev->progs);
  dev->progs = t;
  dev->prog_cap = cap;
  return PARITY_STATUS_OK;
}

int32_t ocl_tier_mode(const ocl_slot_t *s, int *out) {
  const char *t = psup_getenv("PARITY_OPENCL_TIER");
  if (!t || !*t || strcmp(t, "auto") == 0)
    *out = s->cpu_like ? OCL_TIER_TIERED : OCL_TIER_FULL;
  else if (strcmp(t, "tiered") == 0)
    *out = OCL_TIER_TIERED;
  else if (strcmp(t, "full") == 0)
    *out = OCL_TIER_FULL;
  else if (strcmp(t, "quick") == 0)
    *out = OCL_TIER_QUICK;
  else
    return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT,
                    "PARITY_OPENCL_TIER='%.40s' is not one of auto, tiered, full, quick", t);
  return PARITY_STATUS_OK;
}

/* Release what entry p holds (each entry holds its own program reference). */
static void drop(parity_plugin_device_t *dev, ocl_prog_t *p) {
  if (p->kern) clReleaseKernel(p->kern); /* queued launches keep it alive until they have run */
  if (p->prog) clReleaseProgram(p->prog);
  free(p->args);
  if (p->save_pending && dev->saves_pending) dev->saves_pending--;
  memset(p, 0, sizeof *p);
}

void ocl_programs_release(parity_plugin_device_t *dev) {
  for (uint32_t i = 0; i < dev->prog_cap; i++) drop(dev, &dev->progs[i]);
  free(dev->progs);
  dev->progs = NULL;
  dev->prog_cap = dev->prog_count = 0;
}

/* Put the built `fresh` at entry p (empty, or holding the quick program it replaces), and give
 * the partner kernel of the same program (if any) an entry too, unless it has one of the same
 * tier or better. Only the entry that was built writes the cache file. */
static void install(parity_plugin_device_t *dev, ocl_prog_t *p, const ocl_prog_t *fresh) {
  if (p->prog)
    drop(dev, p);
  else
    dev->prog_count++;
  *p = *fresh;
  if (p->save_pending) dev->saves_pending++;
  int partner = ocl_kernel_partner(fresh->kid, fresh->var);
  if (partner < 0) return;
  ocl_prog_t *q = prog_slot(dev->progs, dev->prog_cap, fresh->var, partner);
  if (q->prog && (fresh->quick || !q->quick)) return;
  ocl_prog_t twin = {.prog = fresh->prog, .var = fresh->var, .kid = partner, .key = fresh->key, .quick = fresh->quick};
  if (ocl_make_kernel(dev, &twin) != PARITY_STATUS_OK) return; /* its own launch will build it */
  if (clRetainProgram(fresh->prog) != CL_SUCCESS) {
    clReleaseKernel(twin.kern);
    return;
  }
  if (q->prog)
    drop(dev, q);
  else
    dev->prog_count++;
  *q = twin;
}

static int32_t build(parity_plugin_device_t *dev, ocl_var_t v, int kid, int quick, int cache_only, ocl_prog_t *out) {
  *out = (ocl_prog_t){.var = v, .kid = kid, .quick = quick};
  return ocl_build_kernel(dev, out, cache_only);
}

/* A launch of `work` units on quick entry p (tiered mode): at its OCL_TIER_LAUNCHES-th launch, or
 * a launch of OCL_TIER_BIG units, build the optimised program and swap it in. If that build fails
 * (logged by the build), the quick program keeps running. */
static void tier_up(parity_plugin_device_t *dev, ocl_prog_t *p, uint64_t work) {
  if (p->launches < UINT32_MAX) p->launches++;
  if (work < OCL_TIER_BIG && p->launches < OCL_TIER_LAUNCHES) return;
  ocl_prog_t fresh;
  if (build(dev, p->var, p->kid, 0, 0, &fresh) == PARITY_STATUS_OK)
    install(dev, p, &fresh);
  else
    p->tier_failed = 1;
}

/* Quick programs of one kernel and class built for variants other than the generic one. */
static int specialised_quick(const parity_plugin_device_t *dev, ocl_var_t g, int kid) {
  int n = 0;
  for (uint32_t i = 0; i < dev->prog_cap; i++) {
    const ocl_prog_t *e = &dev->progs[i];
    n += e->prog && e->quick && e->kid == kid && e->var != g && ocl_var_class(e->var) == ocl_var_class(g);
  }
  return n;
}

/* A quick program for variant v. The first OCL_QUICK_SPECIALISED variants of a kernel and class
 * get their own, specialised program (a model's first steps meet one or two ops of a kernel: the
 * specialised program compiles in about half the time). Past them, the variant shares the class's
 * generic program (no SPEC_OP, SPEC_DT, SPEC_DT2: the op and dtypes come from the run-time
 * arguments, as they always do), built once per kernel and class, through a kernel object of its
 * own: a conformance run meets every op and dtype of a kernel (its quick ew_unary programs went
 * from 74 to 6, and a cold run of exp, log, sin, add, mul, eq and cast from 89 to 55 s). The
 * optimised tier stays specialised: tier_up builds v's own program. Same source, same options:
 * the same bits (tests/opencl/test_tiers.c). Kernels whose program pairs differ between v and the
 * generic variant (a sum's red_pass + red_bwd_sum) keep their own quick programs. */
static int32_t build_quick(parity_plugin_device_t *dev, ocl_var_t v, int kid, ocl_prog_t *out) {
  ocl_var_t g = OCL_VAR(ocl_var_class(v), 0, 0, 0);
  if (g == v || ocl_kernel_partner(kid, g) != ocl_kernel_partner(kid, v) ||
      specialised_quick(dev, g, kid) < OCL_QUICK_SPECIALISED)
    return build(dev, v, kid, 1, 0, out);
  ocl_prog_t *gp = prog_slot(dev->progs, dev->prog_cap, g, kid);
  if (!gp->prog) {
    ocl_prog_t fresh;
    int32_t st = build(dev, g, kid, 1, 0, &fresh);
    if (st != PARITY_STATUS_OK) return st;
    install(dev, gp, &fresh);
    gp = prog_slot(dev->progs, dev->prog_cap, g, kid); /* install may have filled the partner's slot */
  }
  *out = (ocl_prog_t){
      .prog = gp->prog, .var = v, .kid = kid, .key = gp->key, .quick = gp->quick, .declared = gp->declared};
  if (clRetainProgram(gp->prog) != CL_SUCCESS)
    return ocl_fail(PARITY_STATUS_INTERNAL, "clRetainProgram failed for %s", ocl_kernel_name(kid));
  int32_t st = ocl_make_kernel(dev, out);
  if (st != PARITY_STATUS_OK) {
    clReleaseProgram(out->prog);
    out->prog = NULL;
  }
  return st;
}

int32_t ocl_program(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint64_t work, ocl_prog_t **out) {
  ocl_prog_t *p = dev->prog_cap ? prog_slot(dev->progs, dev->prog_cap, v, kid) : NULL;
  if (p && p->prog) {
    if (p->quick && !p->tier_failed && work && dev->tier == OCL_TIER_TIERED) tier_up(dev, p, work);
    *out = p;
    return PARITY_STATUS_OK;
  }
  if (ocl_var_class(v) == OCL_CLASS_D && !dev->slot->has_fp64)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "no f64 kernels on %s (no cl_khr_fp64)", dev->slot->kit.info.name);
  if ((dev->prog_count + 4) * 2 > dev->prog_cap) { /* room for build_quick's entries too */
    int32_t st = prog_grow(dev);
    if (st != PARITY_STATUS_OK) return st;
  }
  p = prog_slot(dev->progs, dev->prog_cap, v, kid);
  int quick = dev->tier == OCL_TIER_QUICK || (dev->tier == OCL_TIER_TIERED && work < OCL_TIER_BIG);
  ocl_prog_t fresh = {0};
  int32_t st = PARITY_STATUS_OK;
  /* an optimised binary in the cache loads as fast as a quick one */
  if (quick && dev->tier == OCL_TIER_TIERED) st = build(dev, v, kid, 0, 1, &fresh);
  if (st == PARITY_STATUS_OK && !fresh.prog)
    st = quick ? build_quick(dev, v, kid, &fresh) : build(dev, v, kid, 0, 0, &fresh);
  if (st != PARITY_STATUS_OK) return st;
  p = prog_slot(dev->progs, dev->prog_cap, v, kid); /* build_quick may have installed entries */
  install(dev, p, &fresh);
  if (p->quick && work) p->launches = 1;
  *out = p;
  return PARITY_STATUS_OK;
}

int32_t ocl_kernel(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint64_t work, cl_kernel *out) {
  ocl_prog_t *p;
  int32_t st = ocl_program(dev, v, kid, work, &p);
  if (st == PARITY_STATUS_OK) *out = p->kern;
  return st;
}
