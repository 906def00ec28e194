/* Prepared plans on the Vulkan plugin (vk_plan.c: the plan's dispatches recorded once into its
 * command buffer, one submission per replay): a replay gives bit for bit what the same step gives
 * eagerly, in every kernel family (elementwise, reduce with max/min ties in backward, matmul,
 * conv2d, pooling, softmax), with new inputs written before each replay, many times over, under
 * the validation layer's synchronization checks, with float64 off, and replayed inside the batch
 * (CPU implementations) or submitted alone (GPUs); a recording that fails half
 * way leaves nothing behind (the validation layer names any Vulkan object still alive when the
 * device is destroyed); a plan released while its last run may still execute frees what it owns. */
#define _XOPEN_SOURCE 700 /* setenv, mkstemp */
#include <stdlib.h>
#include <unistd.h>

#include "parity/parity.h"
#include "vk_test.h"

#define OK(expr) cr_assert_eq((expr), PARITY_STATUS_OK, "%s: %s", #expr, parity_last_error())
#define MAX_IN 4

/* One family's step: its inputs (all requiring grad) and the loss built from them. */
typedef struct fcase {
  const char *name;
  uint32_t nin;
  uint32_t rank[MAX_IN];
  int64_t shape[MAX_IN][4];
  int ties; /* small integers as inputs, so that max/min and max_pool see ties */
  void (*build)(parity_tensor_t **in, parity_tensor_t **loss);
} fcase;

static parity_tensor_t *sum_all(parity_tensor_t *t) {
  parity_tensor_t *s;
  OK(parity_reduce(PARITY_OP_SUM, t, 0xffu >> (8 - parity_tensor_rank(t)), 0, &s));
  return s;
}

/* a + b, releasing both */
static parity_tensor_t *add_rel(parity_tensor_t *a, parity_tensor_t *b) {
  parity_tensor_t *c;
  OK(parity_binary(PARITY_OP_ADD, a, b, &c));
  parity_tensor_release(a);
  parity_tensor_release(b);
  return c;
}

static parity_tensor_t *mul(parity_tensor_t *a, parity_tensor_t *b) {
  parity_tensor_t *c;
  OK(parity_binary(PARITY_OP_MUL, a, b, &c));
  return c;
}

static void build_elementwise(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_tensor_t *e, *t;
  OK(parity_unary(PARITY_OP_EXP, in[0], &e));
  OK(parity_unary(PARITY_OP_TANH, in[1], &t));
  parity_tensor_t *y = add_rel(mul(e, t), mul(in[0], in[1]));
  parity_tensor_release(e);
  parity_tensor_release(t);
  *loss = sum_all(y);
  parity_tensor_release(y);
}

static void build_reduce(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_tensor_t *mx, *mn, *sm;
  OK(parity_reduce(PARITY_OP_MAX, in[0], 2u, 0, &mx)); /* over axis 1, ties split */
  OK(parity_reduce(PARITY_OP_MIN, in[0], 1u, 0, &mn)); /* over axis 0 */
  OK(parity_reduce(PARITY_OP_MEAN, in[1], 1u, 1, &sm));
  parity_tensor_t *m2 = mul(mx, mx);
  parity_tensor_release(mx);
  *loss = add_rel(add_rel(sum_all(m2), sum_all(mn)), sum_all(sm));
  parity_tensor_release(m2);
  parity_tensor_release(mn);
  parity_tensor_release(sm);
}

static void build_matmul(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_tensor_t *c;
  OK(parity_matmul(in[0], in[1], &c));
  parity_tensor_t *c2 = mul(c, c);
  parity_tensor_release(c);
  *loss = sum_all(c2);
  parity_tensor_release(c2);
}

static void build_conv2d(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_conv2d_options_t o;
  parity_conv2d_options_init(&o);
  o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
  parity_tensor_t *y;
  OK(parity_conv2d(in[0], in[1], in[2], &o, &y));
  parity_tensor_t *y2 = mul(y, y);
  parity_tensor_release(y);
  *loss = sum_all(y2);
  parity_tensor_release(y2);
}

static void build_pooling(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_pool2d_options_t mp, ap;
  parity_pool2d_options_init(&mp);
  parity_pool2d_options_init(&ap);
  mp.kernel[0] = mp.kernel[1] = 2;
  ap.kernel[0] = ap.kernel[1] = 3;
  ap.stride[0] = ap.stride[1] = 1;
  ap.padding[0] = ap.padding[1] = ap.padding[2] = ap.padding[3] = 1;
  parity_tensor_t *a, *b;
  OK(parity_pool2d(PARITY_OP_MAX_POOL2D, in[0], &mp, &a));
  OK(parity_pool2d(PARITY_OP_AVG_POOL2D, in[0], &ap, &b));
  parity_tensor_t *b2 = mul(b, b);
  parity_tensor_release(b);
  *loss = add_rel(sum_all(a), sum_all(b2));
  parity_tensor_release(a);
  parity_tensor_release(b2);
}

static void build_softmax(parity_tensor_t **in, parity_tensor_t **loss) {
  parity_tensor_t *s, *l;
  OK(parity_softmax(PARITY_OP_SOFTMAX, in[0], 1, &s));
  OK(parity_softmax(PARITY_OP_LOG_SOFTMAX, in[0], 0, &l));
  parity_tensor_t *a = mul(s, in[1]), *b = mul(l, in[1]);
  parity_tensor_release(s);
  parity_tensor_release(l);
  *loss = add_rel(sum_all(a), sum_all(b));
  parity_tensor_release(a);
  parity_tensor_release(b);
}

static const fcase cases[] = {
    {"elementwise", 2, {2, 2}, {{3, 5}, {3, 5}}, 0, build_elementwise},
    {"reduce", 2, {2, 2}, {{4, 6}, {5, 3}}, 1, build_reduce},
    {"matmul", 2, {2, 2}, {{3, 4}, {4, 5}}, 0, build_matmul},
    {"conv2d", 3, {4, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, 0, build_conv2d},
    {"pooling", 1, {4}, {{2, 2, 6, 6}}, 1, build_pooling},
    {"softmax", 2, {2, 2}, {{4, 7}, {4, 7}}, 0, build_softmax},
};
#define NCASES (sizeof cases / sizeof cases[0])

static int64_t numel(const fcase *c, uint32_t i) {
  int64_t n = 1;
  for (uint32_t a = 0; a < c->rank[i]; a++) n *= c->shape[i][a];
  return n;
}

/* the inputs of iteration `it` */
static void make_input(const fcase *c, uint32_t i, int it, float *v) {
  uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(it * 7 + (int)i + 1);
  for (int64_t k = 0; k < numel(c, i); k++) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(z >> 40) / (double)(1 << 24); /* [0, 1) */
    v[k] = c->ties ? (float)(int)(u * 3.0) : (float)(u * 2.0 - 1.0);
  }
}

typedef struct copy {
  parity_tensor_t *in[MAX_IN];
} copy;

static copy copy_new(parity_device_t *dev, const fcase *c) {
  copy m;
  memset(&m, 0, sizeof m);
  for (uint32_t i = 0; i < c->nin; i++) {
    OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, c->rank[i], c->shape[i], &m.in[i]));
    OK(parity_tensor_set_requires_grad(m.in[i], 1));
  }
  return m;
}

static void copy_free(const fcase *c, copy *m) {
  for (uint32_t i = 0; i < c->nin; i++) parity_tensor_release(m->in[i]);
}

static void feed(const fcase *c, copy *m, int it) {
  float v[256];
  for (uint32_t i = 0; i < c->nin; i++) {
    cr_assert_leq(numel(c, i), 256);
    make_input(c, i, it, v);
    OK(parity_tensor_write(m->in[i], v, (uint64_t)numel(c, i) * sizeof(float)));
  }
}

/* zero the gradients, the forward pass and backward; the loss in *loss */
static void step(const fcase *c, copy *m, parity_tensor_t **loss) {
  for (uint32_t i = 0; i < c->nin; i++) parity_tensor_zero_grad(m->in[i]);
  c->build(m->in, loss);
  OK(parity_backward(*loss, NULL, 0));
}

/* the loss and every input's gradient, bit for bit */
static void expect_same(const fcase *c, copy *e, parity_tensor_t *le, copy *r, parity_tensor_t *lr, int it) {
  float a, b;
  cr_assert_eq(parity_tensor_to_host(le, &a, sizeof a), PARITY_STATUS_OK, "%s, eager: %s", c->name,
               parity_last_error());
  cr_assert_eq(parity_tensor_to_host(lr, &b, sizeof b), PARITY_STATUS_OK, "%s, replay %d: %s", c->name, it,
               parity_last_error());
  cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "%s, replay %d: eager loss %.9g, replayed %.9g", c->name, it, a, b);
  for (uint32_t i = 0; i < c->nin; i++) {
    float ge[256], gr[256];
    uint64_t bytes = (uint64_t)numel(c, i) * sizeof(float);
    OK(parity_tensor_to_host(parity_tensor_grad(e->in[i]), ge, bytes));
    OK(parity_tensor_to_host(parity_tensor_grad(r->in[i]), gr, bytes));
    for (int64_t k = 0; k < numel(c, i); k++)
      cr_assert_eq(memcmp(&ge[k], &gr[k], sizeof(float)), 0,
                   "%s, replay %d: gradient of input %u, element %lld: eager %.9g, replayed %.9g", c->name, it, i,
                   (long long)k, ge[k], gr[k]);
  }
}

/* `replays` replays of case c, each after new inputs, against the same step run eagerly */
static void replay_matches_eager(parity_device_t *dev, const fcase *c, int replays) {
  copy e = copy_new(dev, c), r = copy_new(dev, c);
  parity_tensor_t *lr = NULL;
  parity_plan_t *plan = NULL;
  feed(c, &r, 0);
  OK(parity_plan_begin(dev, &plan));
  step(c, &r, &lr); /* recorded (and run once) */
  OK(parity_plan_end(plan));
  cr_assert_gt(parity_plan_command_count(plan), 0);
  for (int it = 1; it <= replays; it++) {
    parity_tensor_t *le = NULL;
    feed(c, &e, it);
    feed(c, &r, it);
    step(c, &e, &le);
    OK(parity_device_synchronize(dev)); /* the replay begins a batch: nothing tracked before it */
    OK(parity_plan_replay(plan));
    /* an eager op right after the replay reads what the plan wrote (ordered by the barrier a
     * replay leaves for the next command) */
    parity_tensor_t *de = NULL, *dr = NULL;
    OK(parity_binary(PARITY_OP_ADD, parity_tensor_grad(r.in[0]), parity_tensor_grad(r.in[0]), &dr));
    OK(parity_binary(PARITY_OP_ADD, parity_tensor_grad(e.in[0]), parity_tensor_grad(e.in[0]), &de));
    expect_same(c, &e, le, &r, lr, it);
    float ve[256], vr[256];
    uint64_t bytes = (uint64_t)numel(c, 0) * sizeof(float);
    OK(parity_tensor_to_host(de, ve, bytes));
    OK(parity_tensor_to_host(dr, vr, bytes));
    cr_assert_eq(memcmp(ve, vr, bytes), 0, "%s, replay %d: an op after the replay read other values", c->name, it);
    parity_tensor_release(de);
    parity_tensor_release(dr);
    parity_tensor_release(le);
  }
  parity_tensor_release(lr);
  parity_plan_destroy(plan);
  copy_free(c, &e);
  copy_free(c, &r);
  OK(parity_device_synchronize(dev));
}

static void all_families(int replays) {
  parity_device_t *dev = vt_device();
  for (size_t k = 0; k < NCASES; k++) replay_matches_eager(dev, &cases[k], replays);
}

Test(vk_plan, replay_is_bitwise_eager_in_every_family, .timeout = 600) { all_families(3); }

Test(vk_plan, replay_is_bitwise_eager_under_synchronization_validation, .timeout = 600) {
  setenv("PARITY_VULKAN_VALIDATION", "sync", 1);
  all_families(2);
}

/* lavapipe runs replays inside the current batch (a CPU implementation): the path of GPUs, a
 * submission per replay, forced */
Test(vk_plan, replay_is_bitwise_eager_with_a_submission_per_replay, .timeout = 600) {
  setenv("PARITY_VULKAN_PLAN_SUBMIT", "own", 1);
  setenv("PARITY_VULKAN_VALIDATION", "sync", 1);
  all_families(2);
}

Test(vk_plan, replay_is_bitwise_eager_with_float64_off, .timeout = 600) {
  setenv("PARITY_VULKAN_FP64", "off", 1);
  all_families(2);
}

/* many replays back to back (none waited for in between), then each result checked once more */
Test(vk_plan, many_replays_stay_bitwise_eager, .timeout = 600) {
  parity_device_t *dev = vt_device();
  replay_matches_eager(dev, &cases[1], 40); /* reduce: scratch buffers owned by the plan */
  const fcase *c = &cases[0];
  copy e = copy_new(dev, c), r = copy_new(dev, c);
  parity_tensor_t *lr = NULL, *le = NULL;
  parity_plan_t *plan = NULL;
  OK(parity_plan_begin(dev, &plan));
  step(c, &r, &lr);
  OK(parity_plan_end(plan));
  for (int it = 0; it < 200; it++) OK(parity_plan_replay(plan)); /* queued, not waited for */
  feed(c, &e, 7);
  feed(c, &r, 7);
  step(c, &e, &le);
  OK(parity_plan_replay(plan));
  expect_same(c, &e, le, &r, lr, 201);
  parity_tensor_release(le);
  parity_tensor_release(lr);
  /* released right after a replay it may still be executing: the plan waits for it */
  OK(parity_plan_replay(plan));
  parity_plan_destroy(plan);
  copy_free(c, &e);
  copy_free(c, &r);
  OK(parity_device_synchronize(dev));
}

/* The stderr of what fn does in a fresh context (log level debug) with the environment given,
 * the device closed and the context destroyed before it is read. */
static char *stderr_of(void (*fn)(parity_device_t *), const char *env_name, const char *env_value) {
  setenv("PARITY_VULKAN_VALIDATION", "1", 1);
  if (env_name) setenv(env_name, env_value, 1);
  uint32_t p;
  parity_context_destroy(vt_context(&p)); /* skips the test when the plugin is not built */
  char path[] = "/tmp/parity-vk-plan-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  unlink(path); /* read through fd: a crash in fn leaves no file behind */
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = "";
  o.log_level = 2;
  parity_context_t *ctx = NULL;
  parity_device_t *dev = NULL;
  int32_t st = parity_context_create(&o, &ctx);
  if (st == PARITY_STATUS_OK) st = parity_context_find_plugin(ctx, "vulkan", &p);
  if (st == PARITY_STATUS_OK) st = parity_context_open_device(ctx, p, 0, &dev);
  if (st == PARITY_STATUS_OK) fn(dev);
  parity_context_destroy(ctx); /* closes the device: the layer reports objects still alive */
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  static char text[1 << 16];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = 0;
  close(fd);
  if (st != PARITY_STATUS_OK) cr_skip_test("no Vulkan device with the validation layer here");
  return text;
}

static void fail_half_way(parity_device_t *dev) {
  const fcase *c = &cases[1]; /* reduce: host buffers, descriptor pools and scratch before the failure */
  copy e = copy_new(dev, c), r = copy_new(dev, c);
  parity_tensor_t *lr = NULL, *le = NULL;
  parity_plan_t *plan = NULL;
  OK(parity_plan_begin(dev, &plan));
  step(c, &r, &lr);
  OK(parity_plan_end(plan)); /* declined: the host replays it command by command */
  feed(c, &e, 1);
  feed(c, &r, 1);
  step(c, &e, &le);
  OK(parity_plan_replay(plan));
  expect_same(c, &e, le, &r, lr, 1);
  parity_tensor_release(le);
  parity_tensor_release(lr);
  parity_plan_destroy(plan);
  copy_free(c, &e);
  copy_free(c, &r);
  OK(parity_device_synchronize(dev));
}

Test(vk_plan, a_recording_that_fails_half_way_leaves_nothing_behind, .timeout = 300) {
  const char *text = stderr_of(fail_half_way, "PARITY_VULKAN_PLAN_FAIL_AT", "6");
  cr_assert(strstr(text, "recording stopped at command 6"), "the recording did not fail as asked:\n%s", text);
  cr_assert(strstr(text, "declined to prepare"), "the host did not fall back to its replay:\n%s", text);
  cr_assert_null(strstr(text, "validation:"), "the validation layer reported:\n%s", text);
  cr_assert_null(strstr(text, "not released"), "%s", text);
}

static void prepare_and_release(parity_device_t *dev) {
  const fcase *c = &cases[4]; /* pooling */
  copy r = copy_new(dev, c);
  parity_tensor_t *lr = NULL;
  parity_plan_t *plan = NULL;
  OK(parity_plan_begin(dev, &plan));
  step(c, &r, &lr);
  OK(parity_plan_end(plan));
  OK(parity_plan_replay(plan));
  parity_tensor_release(lr);
  parity_plan_destroy(plan);
  copy_free(c, &r);
}

/* the control: a plan that was prepared, run and released also leaves nothing behind */
Test(vk_plan, a_released_plan_leaves_nothing_behind, .timeout = 300) {
  const char *text = stderr_of(prepare_and_release, NULL, NULL);
  cr_assert(strstr(text, "plan prepared:"), "the plugin did not prepare the plan:\n%s", text);
  cr_assert_null(strstr(text, "validation:"), "the validation layer reported:\n%s", text);
  cr_assert_null(strstr(text, "not released"), "%s", text);
}
