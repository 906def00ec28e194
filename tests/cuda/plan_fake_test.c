/* Prepared plans (ABI 1.1) as CUDA graphs against the fake driver (fake_libcuda.c, fake_graph.h):
 * a plan is captured once and replayed as one graph launch whose memset nodes really write; each
 * graph entry point (and a launch or memset inside the capture) failing in turn gives a status, a
 * message naming the call, no capture left open, no graph and no device memory left behind, and a
 * stream that eager work still runs on; a driver without the graph entry points declines plans
 * (the host then replays them op by op). Kernels do not run here (tests/cuda/plan_emu_test.c runs
 * them). */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>

#include "cu_test.h"
#include "parity_support/desc.h"

typedef struct {
  int launches;
} fake_stats_t;

static const parity_plugin_api_t *api;
static parity_plugin_device_t *dev;
static parity_plugin_buffer_t *buf;
enum { N = 1000 };

static void *fake_sym(const char *name) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the fake driver is not loaded");
  void *s = dlsym(lib, name);
  cr_assert_not_null(s, "no %s in the fake driver", name);
  return s;
}
static int fake_int(const char *name) { return ((int (*)(void))fake_sym(name))(); }
static void set_mode(const char *m) { ((void (*)(const char *))fake_sym("fake_cuda_set_mode"))(m); }
static int launches(void) { return ((fake_stats_t *)fake_sym("fake_cuda_stats"))->launches; }

static void open_with(const char *mode) {
  setenv("FAKE_CUDA_MODE", mode, 1);
  api = ct_plugin();
  cr_assert_not_null(api->plan_prepare, "the CUDA plugin offers plan entries");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_OK, "device_open: %s", ct_last_error);
  cr_assert_eq(api->buffer_alloc(dev, 4 * N * 4, &buf), PARITY_STATUS_OK, "%s", ct_last_error);
}

static void close_all(void) {
  api->buffer_free(dev, buf);
  api->device_close(dev);
  cr_expect_eq(fake_int("fake_cuda_allocations"), 0, "device memory left allocated");
  api->shutdown();
}

/* the commands: a fill of the first quarter, an add (c = a + b over quarters 0..2), and max's
 * backward over quarter 3 (its tie counts take scratch memory) */
typedef struct {
  parity_op_desc_t add, maxb;
  parity_tensor_desc_t t[7];
  parity_plan_command_t cmd[3];
} plan_src;

static void plan_src_init(plan_src *p, uint64_t fill_off) {
  memset(p, 0, sizeof *p);
  int64_t n = N / 4, one = 1; /* 1,000 bytes */
  p->add.struct_size = p->maxb.struct_size = sizeof p->add;
  p->add.op = PARITY_OP_ADD;
  p->add.direction = PARITY_DIRECTION_FORWARD;
  p->add.num_inputs = 2, p->add.num_outputs = 1;
  for (int k = 0; k < 3; k++) psup_tensor_init(&p->t[k], PARITY_DTYPE_F32, 1, &n, buf, (uint64_t)k * N * 4);
  p->add.inputs[0] = &p->t[0], p->add.inputs[1] = &p->t[1], p->add.outputs[0] = &p->t[2];
  p->maxb.op = PARITY_OP_MAX;
  p->maxb.direction = PARITY_DIRECTION_BACKWARD;
  p->maxb.num_inputs = 3, p->maxb.num_outputs = 1;
  p->maxb.params.reduce.axes_mask = 1;
  psup_tensor_init(&p->t[3], PARITY_DTYPE_F32, 1, &n, buf, 3 * N * 4);          /* x */
  psup_tensor_init(&p->t[4], PARITY_DTYPE_F32, 1, &one, buf, 3 * N * 4 + 1024); /* y */
  psup_tensor_init(&p->t[5], PARITY_DTYPE_F32, 1, &one, buf, 3 * N * 4 + 1028); /* dy */
  psup_tensor_init(&p->t[6], PARITY_DTYPE_F32, 1, &n, buf, 3 * N * 4 + 2000);   /* dx */
  for (int k = 0; k < 3; k++) p->maxb.inputs[k] = &p->t[3 + k];
  p->maxb.outputs[0] = &p->t[6];
  for (int c = 0; c < 3; c++) p->cmd[c].struct_size = sizeof p->cmd[c];
  p->cmd[0].kind = PARITY_PLAN_COMMAND_FILL;
  p->cmd[0].buffer = buf;
  p->cmd[0].offset_bytes = fill_off;
  p->cmd[0].size_bytes = 256;
  const uint32_t pat = 0x3f800000u; /* 1.0f */
  memcpy(p->cmd[0].pattern, &pat, 4);
  p->cmd[0].pattern_size = 4;
  p->cmd[1].kind = p->cmd[2].kind = PARITY_PLAN_COMMAND_KERNEL;
  p->cmd[1].op = &p->add;
  p->cmd[2].op = &p->maxb;
  cr_assert_eq(api->supports(dev, &p->add), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->supports(dev, &p->maxb), PARITY_STATUS_OK, "%s", ct_last_error);
}

/* nothing of a failed or released plan is left in the driver, and eager work runs on the stream */
static void expect_clean(const char *what, int allocations) {
  cr_expect_eq(fake_int("fake_cuda_capturing"), 0, "%s: a capture is left open", what);
  cr_expect_eq(fake_int("fake_cuda_graphs"), 0, "%s: a graph is left behind", what);
  cr_expect_eq(fake_int("fake_cuda_allocations"), allocations, "%s: device memory left behind", what);
  plan_src p;
  plan_src_init(&p, 0);
  int before = launches();
  cr_expect_eq(api->elementwise_forward(dev, &p.add), PARITY_STATUS_OK, "%s: eager add: %s", what, ct_last_error);
  cr_expect_eq(launches(), before + 1, "%s: the eager add ran (the stream is not capturing)", what);
  cr_expect_eq(api->synchronize(dev), PARITY_STATUS_OK, "%s: synchronize: %s", what, ct_last_error);
}

Test(cuda_plan_fake, a_plan_is_captured_once_and_replayed_as_one_graph_launch) {
  open_with("ok");
  plan_src p;
  plan_src_init(&p, 0);
  /* the eager launches of the same commands, as the host issued them while recording */
  int l0 = launches();
  cr_assert_eq(api->elementwise_forward(dev, &p.add), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->reduce_backward(dev, &p.maxb), PARITY_STATUS_OK, "%s", ct_last_error);
  int per_step = launches() - l0;
  int base = fake_int("fake_cuda_allocations"); /* the buffer and the device's own scratch */
  cr_assert_geq(per_step, 2);
  parity_plugin_plan_t *plan = NULL;
  l0 = launches();
  cr_assert_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_OK, "plan_prepare: %s", ct_last_error);
  cr_assert_not_null(plan);
  cr_expect_eq(launches(), l0, "captured launches do not run");
  cr_expect_eq(fake_int("fake_cuda_capturing"), 0, "the capture ended");
  cr_expect_eq(fake_int("fake_cuda_graphs"), 2, "a graph and its executable graph");
  cr_expect_eq(fake_int("fake_cuda_allocations"), base + 1, "the plan owns its scratch");
  float junk[64], got[64];
  for (int i = 0; i < 64; i++) junk[i] = -7.0f;
  for (int run = 0; run < 3; run++) {
    cr_assert_eq(api->buffer_write(dev, buf, 0, junk, sizeof junk), PARITY_STATUS_OK, "%s", ct_last_error);
    int g0 = fake_int("fake_cuda_graph_launches");
    l0 = launches();
    cr_assert_eq(api->plan_run(dev, plan), PARITY_STATUS_OK, "plan_run: %s", ct_last_error);
    cr_expect_eq(fake_int("fake_cuda_graph_launches"), g0 + 1, "a run is one graph launch");
    cr_expect_eq(launches(), l0 + per_step, "the graph ran the eager step's kernels");
    cr_assert_eq(api->buffer_read(dev, buf, 0, got, sizeof got), PARITY_STATUS_OK, "%s", ct_last_error);
    for (int i = 0; i < 64; i++)
      cr_assert_eq(got[i], 1.0f, "run %d: element %d not refilled by the memset node", run, i);
  }
  api->plan_release(dev, plan);
  expect_clean("released", base);
  close_all();
}

static void prepare_fails(const char *entry) {
  int base = fake_int("fake_cuda_allocations");
  plan_src p;
  plan_src_init(&p, 0);
  char mode[64];
  snprintf(mode, sizeof mode, "fail:%s", entry);
  set_mode(mode);
  parity_plugin_plan_t *plan = NULL;
  ct_last_error[0] = 0;
  int32_t st = api->plan_prepare(dev, p.cmd, 3, &plan);
  set_mode("ok");
  cr_expect_neq(st, PARITY_STATUS_OK, "%s failing: plan_prepare succeeded", entry);
  cr_expect_neq(st, PARITY_STATUS_UNSUPPORTED, "%s failing is an error, not a decline", entry);
  cr_expect_null(plan, "%s failing: a plan came back", entry);
  cr_expect(strstr(ct_last_error, entry) != NULL && strstr(ct_last_error, "CUDA_ERROR_OUT_OF_MEMORY"),
            "%s failing: the message names the call and its result: %s", entry, ct_last_error);
  expect_clean(entry, base);
  /* and the next capture works */
  cr_assert_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_OK, "after %s: %s", entry, ct_last_error);
  cr_assert_eq(api->plan_run(dev, plan), PARITY_STATUS_OK, "after %s: %s", entry, ct_last_error);
  api->plan_release(dev, plan);
  expect_clean(entry, base);
}

Test(cuda_plan_fake, each_capture_step_failing_in_turn_ends_the_capture_cleanly) {
  open_with("ok");
  const char *entries[] = {"cuStreamBeginCapture", "cuLaunchKernel", "cuMemsetD32Async", "cuStreamEndCapture",
                           "cuGraphInstantiateWithFlags"};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) prepare_fails(entries[i]);
  close_all();
}

Test(cuda_plan_fake, a_failing_graph_launch_is_reported_and_the_plan_runs_again) {
  open_with("ok");
  int base = fake_int("fake_cuda_allocations");
  plan_src p;
  plan_src_init(&p, 0);
  parity_plugin_plan_t *plan = NULL;
  cr_assert_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_OK, "%s", ct_last_error);
  set_mode("fail:cuGraphLaunch");
  int32_t st = api->plan_run(dev, plan);
  set_mode("ok");
  cr_expect_eq(st, PARITY_STATUS_OUT_OF_MEMORY, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "cuGraphLaunch: CUDA_ERROR_OUT_OF_MEMORY") != NULL, "%s", ct_last_error);
  cr_expect_eq(api->plan_run(dev, plan), PARITY_STATUS_OK, "%s", ct_last_error);
  api->plan_release(dev, plan);
  expect_clean("cuGraphLaunch", base);
  close_all();
}

/* release has no status: a destroy the driver refuses is logged, and the plan's memory is freed */
static void release_with_failing(const char *entry) {
  int base = fake_int("fake_cuda_allocations"), graphs = fake_int("fake_cuda_graphs");
  plan_src p;
  plan_src_init(&p, 0);
  parity_plugin_plan_t *plan = NULL;
  cr_assert_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_OK, "%s", ct_last_error);
  char mode[64];
  snprintf(mode, sizeof mode, "fail:%s", entry);
  set_mode(mode);
  api->plan_release(dev, plan);
  set_mode("ok");
  cr_expect_eq(fake_int("fake_cuda_allocations"), base, "%s failing: the plan's scratch is still freed", entry);
  cr_expect_eq(fake_int("fake_cuda_graphs"), graphs + 1, "%s failing: only what the driver refused to destroy is left",
               entry);
  cr_expect_eq(fake_int("fake_cuda_capturing"), 0);
}

Test(cuda_plan_fake, a_failing_graph_destroy_at_release_frees_the_rest) {
  open_with("ok");
  release_with_failing("cuGraphExecDestroy");
  release_with_failing("cuGraphDestroy");
  close_all();
}

static void declines(const char *mode) {
  open_with(mode);
  plan_src p;
  plan_src_init(&p, 0);
  parity_plugin_plan_t *plan = NULL;
  cr_expect_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_UNSUPPORTED, "%s", ct_last_error);
  cr_expect_null(plan);
  cr_expect(strstr(ct_last_error, "lacks the graph entry points") != NULL, "%s", ct_last_error);
  expect_clean(mode, 1);
  close_all();
}

Test(cuda_plan_fake, a_driver_without_graphs_declines_plans) { declines("nographs"); }
Test(cuda_plan_fake, a_driver_without_cuGraphInstantiateWithFlags_declines_plans) {
  declines("hide:cuGraphInstantiateWithFlags");
}

Test(cuda_plan_fake, a_fill_needing_a_host_copy_declines_and_ends_the_capture) {
  open_with("ok");
  plan_src p;
  plan_src_init(&p, 2); /* a 4-byte pattern at byte 2: the memsets cannot, a host copy would */
  parity_plugin_plan_t *plan = NULL;
  cr_expect_eq(api->plan_prepare(dev, p.cmd, 3, &plan), PARITY_STATUS_UNSUPPORTED, "%s", ct_last_error);
  cr_expect_null(plan);
  cr_expect(strstr(ct_last_error, "not aligned") != NULL, "%s", ct_last_error);
  expect_clean("unaligned fill", 1);
  close_all();
}

/* ---- every entry from a thread of its own ---------------------------------------------------- */
/* parity's entries may be called from any thread (a user's worker, a thread pool), and a CUDA
 * context is current per thread: the plugin makes its own current in every entry. The fake keeps
 * the current context per thread and refuses work where none is (CUDA_ERROR_INVALID_CONTEXT), so
 * each step below runs on a new thread, where no context was ever made current. */
typedef struct {
  plan_src *p;
  parity_plugin_buffer_t *b2;
  parity_plugin_plan_t *plan;
  float host[64];
  int32_t st;
} thread_job;

typedef struct {
  void (*fn)(thread_job *);
  thread_job *j;
} thread_arg;
static void *on_thread(void *arg) {
  thread_arg *a = arg;
  a->fn(a->j);
  return NULL;
}
static void run_on_new_thread(void (*fn)(thread_job *), thread_job *j, const char *what) {
  thread_arg arg = {fn, j};
  pthread_t t;
  j->st = -1;
  cr_assert_eq(pthread_create(&t, NULL, on_thread, &arg), 0);
  cr_assert_eq(pthread_join(t, NULL), 0);
  cr_expect_eq(j->st, PARITY_STATUS_OK, "%s on a new thread: %s", what, ct_last_error);
}
static void t_alloc(thread_job *j) { j->st = api->buffer_alloc(dev, 256, &j->b2); }
static void t_write(thread_job *j) { j->st = api->buffer_write(dev, j->b2, 0, j->host, sizeof j->host); }
static void t_fill(thread_job *j) {
  const uint32_t one = 0x3f800000u;
  j->st = api->buffer_fill(dev, buf, 0, 1024, &one, 4);
}
static void t_copy(thread_job *j) { j->st = api->buffer_copy(dev, j->b2, 0, buf, N * 4, 256); }
static void t_add(thread_job *j) { j->st = api->elementwise_forward(dev, &j->p->add); }
static void t_sync(thread_job *j) { j->st = api->synchronize(dev); }
static void t_read(thread_job *j) { j->st = api->buffer_read(dev, buf, 2 * N * 4, j->host, sizeof j->host); }
static void t_prepare(thread_job *j) { j->st = api->plan_prepare(dev, j->p->cmd, 3, &j->plan); }
static void t_run(thread_job *j) { j->st = api->plan_run(dev, j->plan); }
static void t_release(thread_job *j) {
  api->plan_release(dev, j->plan);
  j->st = PARITY_STATUS_OK;
}
static void t_free(thread_job *j) {
  api->buffer_free(dev, j->b2);
  j->st = PARITY_STATUS_OK;
}
static void t_close(thread_job *j) {
  api->buffer_free(dev, buf);
  api->device_close(dev);
  j->st = PARITY_STATUS_OK;
}
static void t_driver_alloc(thread_job *j) {
  CUresult (*mem_alloc)(CUdeviceptr *, size_t) = NULL;
  CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) = (CUresult(*)(
      const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))fake_sym("cuGetProcAddress_v2");
  CUdriverProcAddressQueryResult found;
  CUdeviceptr p = 0;
  j->st = gpa("cuMemAlloc", (void **)&mem_alloc, 12000, 0, &found) == CUDA_SUCCESS && mem_alloc &&
                  mem_alloc(&p, 64) == CUDA_ERROR_INVALID_CONTEXT && p == 0
              ? PARITY_STATUS_OK
              : PARITY_STATUS_INTERNAL;
}

Test(cuda_plan_fake, every_entry_makes_its_context_current_on_a_thread_that_never_had_it) {
  open_with("ok");
  plan_src p;
  plan_src_init(&p, 0);
  thread_job j = {.p = &p};
  for (int i = 0; i < 64; i++) j.host[i] = (float)i;
  /* the fake's own rule first: a thread with no current context gets no memory */
  run_on_new_thread(t_driver_alloc, &j, "cuMemAlloc refused with CUDA_ERROR_INVALID_CONTEXT");
  run_on_new_thread(t_alloc, &j, "buffer_alloc");
  run_on_new_thread(t_write, &j, "buffer_write");
  run_on_new_thread(t_fill, &j, "buffer_fill");
  run_on_new_thread(t_copy, &j, "buffer_copy");
  run_on_new_thread(t_add, &j, "elementwise_forward");
  run_on_new_thread(t_sync, &j, "synchronize");
  run_on_new_thread(t_read, &j, "buffer_read");
  run_on_new_thread(t_prepare, &j, "plan_prepare");
  run_on_new_thread(t_run, &j, "plan_run");
  run_on_new_thread(t_sync, &j, "synchronize after plan_run");
  run_on_new_thread(t_release, &j, "plan_release");
  run_on_new_thread(t_free, &j, "buffer_free");
  run_on_new_thread(t_close, &j, "buffer_free and device_close");
  cr_expect_eq(fake_int("fake_cuda_allocations"), 0, "device memory left allocated by an entry without its context");
  cr_expect_eq(fake_int("fake_cuda_graphs"), 0, "a graph left behind by plan_release without its context");
  api->shutdown();
}
