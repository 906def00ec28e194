/* cu_plan.c — prepared plans (ABI 1.1) as CUDA graphs, by stream capture. The kit
 * (parity_support/gpu_kit.h) calls begin, issues the plan's commands through the same eager
 * entries (cu_run's cuLaunchKernel, cu_buffer_fill's memsets) and calls end; between the two the
 * device's stream is capturing, so each of those calls is recorded into a graph instead of run,
 * with the arguments it was given (the driver copies kernel arguments at the call). end
 * instantiates the graph once; a run is one cuGraphLaunch on the device's stream, ordered with
 * eager work like any launch, and gives the bits the eager calls give: the same kernels, geometry
 * and arguments.
 *
 * What a capture cannot hold is kept out of it: scratch memory comes from plain cuMemAlloc owned
 * by the plan (the device's scratch is stream-ordered: cuMemAllocAsync / cuMemFreeAsync would be
 * captured as graph allocations) and lives until release; a fill that needs a host copy declines
 * (cu_memory.c). The capture is RELAXED so that cuMemAlloc is allowed during it. A command that
 * fails ends the capture (end with ok 0): the stream leaves capture mode and stays usable. A driver
 * without the graph entry points declines every plan (UNSUPPORTED: the host replays op by op). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_internal.h"
#include "parity_support/grow.h"

struct parity_plugin_plan_t {
  CUgraph graph;
  CUgraphExec exec;
  CUdeviceptr *mem; /* plan-owned scratch allocations, freed at release */
  uint32_t nmem, cap;
  CUdeviceptr scratch; /* the largest of them: what the next command's scratch reuses */
  uint64_t scratch_size;
};

static int have_graphs(void) {
  return cu_drv.cuStreamBeginCapture && cu_drv.cuStreamEndCapture && cu_drv.cuGraphInstantiateWithFlags &&
         cu_drv.cuGraphLaunch && cu_drv.cuGraphExecDestroy && cu_drv.cuGraphDestroy;
}

static void warn(const char *call, CUresult r) {
  char msg[256];
  cu_result_message(msg, sizeof msg, (int)r, call, "plan_release");
  cu_log(PARITY_LOG_WARNING, "%s", msg);
}

/* Free what a plan owns; `wait`: its graph may still run on the stream (wait before freeing its
 * memory). Driver failures here have no caller to report to: they are logged. */
static void plan_free(parity_plugin_device_t *dev, parity_plugin_plan_t *p, int wait) {
  if (!p) return;
  if (!cu_poisoned(&dev->slot->poison)) { /* a poisoned context fails every call: skip them */
    CUresult r;
    if (wait && (r = cu_drv.cuStreamSynchronize(dev->stream)) != CUDA_SUCCESS) warn("cuStreamSynchronize", r);
    if (p->exec && (r = cu_drv.cuGraphExecDestroy(p->exec)) != CUDA_SUCCESS) warn("cuGraphExecDestroy", r);
    if (p->graph && (r = cu_drv.cuGraphDestroy(p->graph)) != CUDA_SUCCESS) warn("cuGraphDestroy", r);
    for (uint32_t i = 0; i < p->nmem; i++)
      if ((r = cu_drv.cuMemFree(p->mem[i])) != CUDA_SUCCESS) warn("cuMemFree", r);
  }
  free(p->mem);
  free(p);
}

int32_t cu_plan_begin(parity_plugin_device_t *dev) {
  if (!have_graphs())
    return cu_fail(PARITY_STATUS_UNSUPPORTED,
                   "plan_prepare: the CUDA %d.%d driver in %s lacks the graph entry points (cuStreamBeginCapture, "
                   "cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy, "
                   "cuGraphDestroy; CUDA 11.4 or newer): the plan is replayed op by op",
                   cu_drv.version / 1000, (cu_drv.version % 1000) / 10, cu_driver_library());
  if (dev->rec) return cu_fail(PARITY_STATUS_INTERNAL, "plan_prepare: a capture is already under way on this device");
  parity_plugin_plan_t *p = calloc(1, sizeof *p);
  if (!p) return cu_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  /* relaxed: the plan's scratch is allocated (cuMemAlloc) while the stream captures */
  CUresult r = cu_drv.cuStreamBeginCapture(dev->stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r != CUDA_SUCCESS) {
    free(p);
    return cu_res_fail(dev, r, "cuStreamBeginCapture", "plan_prepare");
  }
  dev->rec = p;
  return PARITY_STATUS_OK;
}

/* End the capture: the graph it made (NULL on failure), the result reported unless ok is 0. */
static int32_t end_capture(parity_plugin_device_t *dev, int ok, CUgraph *graph) {
  *graph = NULL;
  CUresult r = cu_drv.cuStreamEndCapture(dev->stream, graph);
  if (r != CUDA_SUCCESS) {
    if (*graph) cu_drv.cuGraphDestroy(*graph); /* untrusted: a failing call that made a graph anyway */
    *graph = NULL;
    return ok ? cu_res_fail(dev, r, "cuStreamEndCapture", "plan_prepare") : PARITY_STATUS_INTERNAL;
  }
  if (!*graph && ok) return cu_fail(PARITY_STATUS_INTERNAL, "plan_prepare: cuStreamEndCapture succeeded with no graph");
  return PARITY_STATUS_OK;
}

int32_t cu_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out) {
  parity_plugin_plan_t *p = dev->rec;
  if (!p) return cu_fail(PARITY_STATUS_INTERNAL, "plan_prepare: no capture under way on this device");
  dev->rec = NULL; /* whatever happens below, the stream is no longer capturing */
  int32_t st = end_capture(dev, ok, &p->graph);
  if (!ok || st != PARITY_STATUS_OK) {
    plan_free(dev, p, 0); /* nothing of it ran: no wait */
    return ok ? st : PARITY_STATUS_OK;
  }
  CUresult r = cu_drv.cuGraphInstantiateWithFlags(&p->exec, p->graph, 0);
  if (r != CUDA_SUCCESS || !p->exec) {
    p->exec = NULL; /* untrusted after a failure: neither launched nor destroyed */
    st = r != CUDA_SUCCESS
             ? cu_res_fail(dev, r, "cuGraphInstantiateWithFlags", "plan_prepare")
             : cu_fail(PARITY_STATUS_INTERNAL, "plan_prepare: cuGraphInstantiateWithFlags succeeded with no graph");
    plan_free(dev, p, 0);
    return st;
  }
  *out = p;
  return PARITY_STATUS_OK;
}

int32_t cu_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  /* the kit entered the device; like a kernel entry, a run enqueues and returns */
  CU_CHECK(dev, cu_drv.cuGraphLaunch(plan->exec, dev->stream), "cuGraphLaunch", "plan_run");
  return PARITY_STATUS_OK;
}

void cu_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan) { plan_free(dev, plan, 1); }

int32_t cu_plan_scratch(parity_plugin_device_t *dev, uint64_t bytes, CUdeviceptr *out) {
  parity_plugin_plan_t *p = dev->rec;
  /* the graph is a chain in stream order: commands share one scratch as eager ones do */
  if (psup_kit_scratch_fits(dev->scratch_mode, p->scratch ? p->scratch_size : 0, bytes)) {
    *out = p->scratch;
    return PARITY_STATUS_OK;
  }
  if (!psup_grow(&p->mem, &p->cap, p->nmem, sizeof *p->mem, 4))
    return cu_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  uint64_t size = psup_kit_scratch_size(dev->scratch_mode, bytes, dev->slot->kit.info.max_buffer_bytes);
  CUdeviceptr m = 0;
  CUresult r = cu_drv.cuMemAlloc(&m, (size_t)size);
  if (r != CUDA_SUCCESS || !m) {
    char what[200];
    snprintf(what, sizeof what, "%llu bytes of a plan's scratch on %s", (unsigned long long)size,
             dev->slot->kit.info.name);
    return r != CUDA_SUCCESS ? cu_res_fail(dev, r, "cuMemAlloc", what)
                             : cu_fail(PARITY_STATUS_INTERNAL, "cuMemAlloc succeeded with no memory (%s)", what);
  }
  /* the earlier, smaller ones stay alive: captured launches use them */
  p->mem[p->nmem++] = m;
  p->scratch = m;
  p->scratch_size = size;
  *out = m;
  return PARITY_STATUS_OK;
}
