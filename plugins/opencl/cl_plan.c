/* cl_plan.c — the OpenCL plugin's prepared plans (the ABI 1.1 plan entries, through the host kit's
 * psup_kit_plans_t). The kit prepares a plan by issuing its commands through the eager entries
 * between ocl_plan_begin and ocl_plan_end; meanwhile dev->rec is set and the launch functions
 * (cl_device.c, cl_memory.c) call the ocl_rec_* functions below instead of enqueueing:
 *   - a kernel launch becomes a kernel object of the plan's own (clCreateKernel on the program the
 *     eager launch would use), every argument set once, with the launch's global and local sizes;
 *   - a fill stays a fill, a copy a copy; a fill whose offset the pattern does not divide (eager:
 *     a write of a host copy) keeps its host copy in the plan;
 *   - scratch memory (reduce's partials and tie counts) is a buffer the plan owns, reused between
 *     its launches as the device's scratch is between eager ones (the queue is in order).
 * A replay enqueues that list as it stands: no validation, geometry or argument packing, the same
 * kernels with the same arguments as the eager launches it recorded, so the same bits.
 *
 * Test knobs, read at begin: PARITY_OPENCL_PLAN_FAIL_AT=k makes the k-th recorded command (from 1)
 * fail with UNSUPPORTED (the host then replays eagerly); PARITY_OPENCL_PLAN_LOG=file appends
 * "prepared <commands> <live>", "discarded <live>" or "released <live>" per plan, <live> the
 * plan-owned OpenCL objects and host copies still alive in the process afterwards. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "cl_internal.h"
#include "parity_support/grow.h"

enum { CMD_KERNEL, CMD_FILL, CMD_COPY, CMD_WRITE };

typedef struct ocl_cmd_t {
  int kind;
  cl_uint dims;
  cl_kernel kern; /* KERNEL: the plan's own, arguments set */
  size_t global[2], local[2];
  cl_mem a, b; /* FILL, WRITE: a; COPY: a to b */
  size_t off, off2, size;
  unsigned char pattern[8];
  uint32_t psize;
  void *host; /* WRITE: the bytes, the plan's */
} ocl_cmd_t;

struct parity_plugin_plan_t {
  ocl_cmd_t *cmds;
  uint32_t count, cap;
  cl_mem *mems; /* scratch buffers the plan owns */
  uint32_t nmem, capmem;
  cl_mem scratch; /* the latest of mems, reused while large enough */
  uint64_t scratch_size;
  int writes; /* WRITE commands: release waits for the queue */
};

typedef struct ocl_rec_t {
  parity_plugin_plan_t *plan;
  long fail_at; /* test knob: fail the fail_at-th command (0: never) */
  long seen;
  char log[600]; /* test knob: the log file, or empty */
} ocl_rec_t;

static atomic_long live; /* plan-owned objects alive in the process (PARITY_OPENCL_PLAN_LOG) */

static void plan_log(const ocl_rec_t *r, const char *what, long n) {
  if (!r->log[0]) return;
  FILE *f = fopen(r->log, "a");
  if (!f) return;
  if (n >= 0)
    fprintf(f, "%s %ld %ld\n", what, n, atomic_load(&live));
  else
    fprintf(f, "%s %ld\n", what, atomic_load(&live));
  fclose(f);
}

/* Free the plan; keep_host: leave its host copies (a queue that did not drain may still read them). */
static void free_plan(parity_plugin_plan_t *p, int keep_host) {
  for (uint32_t i = 0; i < p->count; i++) {
    ocl_cmd_t *c = &p->cmds[i];
    if (c->kern) clReleaseKernel(c->kern); /* queued launches keep it alive until they have run */
    if (c->kern) atomic_fetch_sub(&live, 1);
    if (c->host && !keep_host) {
      atomic_fetch_sub(&live, 1);
      free(c->host);
    }
  }
  for (uint32_t i = 0; i < p->nmem; i++) ocl_mem_release(p->mems[i]);
  atomic_fetch_sub(&live, (long)p->nmem + 1);
  free(p->cmds);
  free(p->mems);
  free(p);
}

int32_t ocl_plan_begin(parity_plugin_device_t *dev) {
  if (dev->rec) return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "plan_prepare: a plan is already recording");
  long long fail_at = 0;
  char msg[200];
  if (psup_env_int("PARITY_OPENCL_PLAN_FAIL_AT", 0, 1ll << 40, 0, &fail_at, msg, sizeof msg) != 0)
    return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "plan_prepare: %s", msg);
  ocl_rec_t *r = calloc(1, sizeof *r);
  parity_plugin_plan_t *p = calloc(1, sizeof *p);
  if (!r || !p) {
    free(r);
    free(p);
    return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  }
  atomic_fetch_add(&live, 1);
  r->plan = p;
  r->fail_at = (long)fail_at;
  const char *log = psup_getenv("PARITY_OPENCL_PLAN_LOG");
  if (log && *log) snprintf(r->log, sizeof r->log, "%s", log);
  dev->rec = r;
  return PARITY_STATUS_OK;
}

int32_t ocl_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out) {
  ocl_rec_t *r = dev->rec;
  if (!r) return ocl_fail(PARITY_STATUS_INTERNAL, "plan_prepare: no plan is recording");
  dev->rec = NULL;
  parity_plugin_plan_t *p = r->plan;
  if (!ok) {
    free_plan(p, 0);
    plan_log(r, "discarded", -1);
  } else {
    *out = p;
    plan_log(r, "prepared", (long)p->count);
  }
  free(r);
  return PARITY_STATUS_OK;
}

/* The next command slot of the recording (zeroed), or a status: out of memory, or the test knob's
 * failure. */
static int32_t next_cmd(parity_plugin_device_t *dev, int kind, ocl_cmd_t **out) {
  ocl_rec_t *r = dev->rec;
  parity_plugin_plan_t *p = r->plan;
  if (r->fail_at && ++r->seen == r->fail_at)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "plan_prepare: command %ld not recorded (PARITY_OPENCL_PLAN_FAIL_AT)",
                    r->seen);
  if (!psup_grow(&p->cmds, &p->cap, p->count, sizeof *p->cmds, 16))
    return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  ocl_cmd_t *c = &p->cmds[p->count];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  *out = c;
  return PARITY_STATUS_OK;
}

/* A plan is replayed many times: a launch recorded on a quick program (tiered mode,
 * cl_programs.c) gets the optimised one now, as the eager launches would after a few more calls
 * (the same bits: tests/opencl/test_tiers.c), when the optimised kernel keeps the launch's
 * work-group size; else, or if that build fails (logged), the quick program. Returns the program
 * to create the kernel from, retained (the caller releases it). */
static cl_program program_for(parity_plugin_device_t *dev, const ocl_prog_t *p, uint32_t dims, const size_t *local) {
  cl_program quick = p->prog;
  if (clRetainProgram(quick) != CL_SUCCESS) return NULL;
  if (!p->quick || p->tier_failed || dev->tier != OCL_TIER_TIERED || dims != 1 || !local || p->local != local[0])
    return quick;
  ocl_prog_t *q; /* the same table entry, swapped to the optimised program */
  if (ocl_program(dev, p->var, p->kid, OCL_TIER_BIG, &q) != PARITY_STATUS_OK || q->quick || q->local != local[0] ||
      clRetainProgram(q->prog) != CL_SUCCESS)
    return quick;
  clReleaseProgram(quick);
  return q->prog;
}

int32_t ocl_rec_launch(parity_plugin_device_t *dev, const ocl_prog_t *p, int kid, uint32_t dims, const size_t *global,
                       const size_t *local, uint32_t nargs, const ocl_arg_t *args) {
  ocl_cmd_t *c;
  int32_t st = next_cmd(dev, CMD_KERNEL, &c);
  if (st != PARITY_STATUS_OK) return st;
  cl_program prog = program_for(dev, p, dims, local);
  if (!prog) return ocl_fail(PARITY_STATUS_INTERNAL, "plan_prepare: %s: clRetainProgram failed", kp_kernel_name(kid));
  cl_int e;
  cl_kernel k = clCreateKernel(prog, kp_kernel_name(kid), &e);
  clReleaseProgram(prog); /* the kernel holds its program */
  OCL_CHECK(e, "clCreateKernel", kp_kernel_name(kid));
  for (uint32_t i = 0; i < nargs; i++) {
    e = clSetKernelArg(k, i, args[i].size, args[i].value);
    if (e != CL_SUCCESS) {
      clReleaseKernel(k);
      return ocl_cl_fail(e, "clSetKernelArg", kp_kernel_name(kid));
    }
  }
  c->kern = k;
  c->dims = dims;
  for (uint32_t i = 0; i < dims && i < 2; i++) {
    c->global[i] = global[i];
    c->local[i] = local ? local[i] : 0;
  }
  if (!local) c->local[0] = 0; /* NULL local size: the driver's choice, as eager */
  atomic_fetch_add(&live, 1);
  dev->rec->plan->count++;
  return PARITY_STATUS_OK;
}

int32_t ocl_rec_fill(parity_plugin_device_t *dev, cl_mem m, size_t off, size_t size, const void *pattern,
                     uint32_t psize) {
  ocl_cmd_t *c;
  int32_t st = next_cmd(dev, CMD_FILL, &c);
  if (st != PARITY_STATUS_OK) return st;
  if (psize > sizeof c->pattern) return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "fill pattern of %u bytes", psize);
  c->a = m;
  c->off = off;
  c->size = size;
  memcpy(c->pattern, pattern, psize);
  c->psize = psize;
  dev->rec->plan->count++;
  return PARITY_STATUS_OK;
}

int32_t ocl_rec_copy(parity_plugin_device_t *dev, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off,
                     size_t bytes) {
  ocl_cmd_t *c;
  int32_t st = next_cmd(dev, CMD_COPY, &c);
  if (st != PARITY_STATUS_OK) return st;
  c->a = src;
  c->off = src_off;
  c->b = dst;
  c->off2 = dst_off;
  c->size = bytes;
  dev->rec->plan->count++;
  return PARITY_STATUS_OK;
}

int32_t ocl_rec_write(parity_plugin_device_t *dev, cl_mem m, size_t off, const void *src, size_t size) {
  ocl_cmd_t *c;
  int32_t st = next_cmd(dev, CMD_WRITE, &c);
  if (st != PARITY_STATUS_OK) return st;
  c->host = malloc(size ? size : 1);
  if (!c->host) return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  memcpy(c->host, src, size);
  c->a = m;
  c->off = off;
  c->size = size;
  atomic_fetch_add(&live, 1);
  dev->rec->plan->writes = 1;
  dev->rec->plan->count++;
  return PARITY_STATUS_OK;
}

int32_t ocl_rec_scratch(parity_plugin_device_t *dev, uint64_t bytes, cl_mem *out) {
  parity_plugin_plan_t *p = dev->rec->plan;
  if (psup_kit_scratch_fits(dev->scratch_mode, p->scratch ? p->scratch_size : 0, bytes)) {
    *out = p->scratch;
    return PARITY_STATUS_OK;
  }
  if (!psup_grow(&p->mems, &p->capmem, p->nmem, sizeof *p->mems, 4))
    return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  bytes = psup_kit_scratch_size(dev->scratch_mode, bytes, dev->slot->kit.info.max_buffer_bytes);
  cl_int e;
  cl_mem m = clCreateBuffer(dev->ctx, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &e);
  OCL_CHECK(e, "clCreateBuffer", "a plan's scratch for partial results");
  /* earlier recorded launches keep using the smaller one: the plan keeps both */
  p->mems[p->nmem++] = m;
  atomic_fetch_add(&live, 1);
  p->scratch = m;
  p->scratch_size = bytes;
  *out = m;
  return PARITY_STATUS_OK;
}

static cl_int enqueue(cl_command_queue q, const ocl_cmd_t *c) {
  switch (c->kind) {
    case CMD_KERNEL:
      return clEnqueueNDRangeKernel(q, c->kern, c->dims, NULL, c->global, c->local[0] ? c->local : NULL, 0, NULL, NULL);
    case CMD_FILL: return clEnqueueFillBuffer(q, c->a, c->pattern, c->psize, c->off, c->size, 0, NULL, NULL);
    case CMD_COPY: return clEnqueueCopyBuffer(q, c->a, c->b, c->off, c->off2, c->size, 0, NULL, NULL);
    default: return clEnqueueWriteBuffer(q, c->a, CL_FALSE, c->off, c->size, c->host, 0, NULL, NULL);
  }
}

int32_t ocl_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  static const char *const calls[] = {"clEnqueueNDRangeKernel", "clEnqueueFillBuffer", "clEnqueueCopyBuffer",
                                      "clEnqueueWriteBuffer"};
  cl_command_queue q = dev->queue;
  const ocl_cmd_t *c = plan->cmds, *end = c + plan->count;
  for (; c < end; c++) {
    cl_int e = enqueue(q, c);
    if (e != CL_SUCCESS) return ocl_cl_fail(e, calls[c->kind], "plan_run");
  }
  return PARITY_STATUS_OK;
}

void ocl_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  /* a queued write may still read the plan's host copy */
  int drained = !plan->writes || clFinish(dev->queue) == CL_SUCCESS;
  if (plan->writes && drained) ocl_queue_drained(dev);
  if (!drained) ocl_log(PARITY_LOG_WARNING, "plan_release: the queue did not drain; the plan's host copies are kept");
  free_plan(plan, !drained);
  const char *log = psup_getenv("PARITY_OPENCL_PLAN_LOG");
  if (log && *log) {
    ocl_rec_t r = {0};
    snprintf(r.log, sizeof r.log, "%s", log);
    plan_log(&r, "released", -1);
  }
}
