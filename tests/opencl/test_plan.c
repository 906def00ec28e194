/* test_plan.c — the OpenCL plugin's prepared plans (plugins/opencl/cl_plan.c). One gradient step
 * that goes through every kernel family (conv2d, max pooling, elementwise, matmul, softmax, sum,
 * max and min with their tie-sharing backward, and a long max whose forward and backward take
 * scratch memory for partials) runs eagerly on one set of tensors and as a replayed plan on a
 * twin set, with new inputs (ties included) written into both before every step: the losses and
 * every gradient must be the same bits. PARITY_OPENCL_PLAN_LOG tells whether the plugin prepared
 * the plan (and how many of its objects are alive afterwards); PARITY_OPENCL_PLAN_FAIL_AT makes
 * a prepare fail in the middle. */
#define _XOPEN_SOURCE 700 /* setenv, mkstemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocl_test.h"
#include "parity/parity.h"

#define OK(x) cr_assert_eq((x), PARITY_STATUS_OK, "%s: %s", #x, parity_last_error())

enum { NX = 2 * 2 * 6 * 6, NW = 3 * 2 * 3 * 3, NB = 3, NM = 12 * 5, NV = 40000, NLEAF = 5 };

typedef struct model {
  parity_tensor_t *leaf[NLEAF]; /* x [2,2,6,6], w [3,2,3,3], b [3], m [12,5], v [1,NV] */
} model;

static const int64_t leaf_n[NLEAF] = {NX, NW, NB, NM, NV};
static float data[NLEAF][NV];

static model model_new(parity_device_t *dev) {
  static const uint32_t rank[NLEAF] = {4, 4, 1, 2, 2};
  static const int64_t shape[NLEAF][4] = {{2, 2, 6, 6}, {3, 2, 3, 3}, {3}, {12, 5}, {1, NV}};
  model m;
  for (int i = 0; i < NLEAF; i++) {
    OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, rank[i], shape[i], &m.leaf[i]));
    OK(parity_tensor_set_requires_grad(m.leaf[i], 1));
  }
  return m;
}

static void model_free(model *m) {
  for (int i = 0; i < NLEAF; i++) parity_tensor_release(m->leaf[i]);
}

/* Inputs of round r: multiples of 1/8 in [-2, 2), so max, min and pooling meet ties. */
static void make_data(int r) {
  uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 7);
  for (int i = 0; i < NLEAF; i++)
    for (int64_t k = 0; k < leaf_n[i]; k++) {
      z = z * 6364136223846793005ull + 1442695040888963407ull;
      data[i][k] = (float)((int)(z >> 59) - 16) / 8.0f;
    }
}

static void feed(model *m) {
  for (int i = 0; i < NLEAF; i++) OK(parity_tensor_write(m->leaf[i], data[i], (uint64_t)leaf_n[i] * sizeof(float)));
}

/* zero_grad, the forward through every family, backward; returns the loss (the caller's). */
static parity_tensor_t *step(model *m) {
  for (int i = 0; i < NLEAF; i++) parity_tensor_zero_grad(m->leaf[i]);
  OK(parity_scope_begin());
  parity_tensor_t *c, *p, *t, *f, *h, *s, *mx, *mn, *vmax, *vmin, *l1, *l2, *l3, *l4, *a, *b, *loss;
  parity_pool2d_options_t po = {.kernel = {2, 2}};
  OK(parity_conv2d(m->leaf[0], m->leaf[1], m->leaf[2], NULL, &c)); /* [2,3,4,4] */
  OK(parity_pool2d(PARITY_OP_MAX_POOL2D, c, &po, &p));             /* [2,3,2,2] */
  OK(parity_unary(PARITY_OP_TANH, p, &t));
  OK(parity_reshape(t, 2, (int64_t[]){2, 12}, &f));
  OK(parity_matmul(f, m->leaf[3], &h)); /* [2,5] */
  OK(parity_softmax(PARITY_OP_LOG_SOFTMAX, h, 1, &s));
  OK(parity_reduce(PARITY_OP_MAX, h, 0x2, 0, &mx));
  OK(parity_reduce(PARITY_OP_MIN, s, 0x2, 0, &mn));
  OK(parity_reduce(PARITY_OP_MAX, m->leaf[4], 0, 0, &vmax)); /* long: partials in scratch */
  OK(parity_reduce(PARITY_OP_MIN, m->leaf[4], 0, 0, &vmin));
  OK(parity_reduce(PARITY_OP_SUM, mx, 0, 0, &l1));
  OK(parity_reduce(PARITY_OP_SUM, mn, 0, 0, &l2));
  OK(parity_binary(PARITY_OP_MUL, vmax, vmin, &l3));
  OK(parity_reduce(PARITY_OP_SUM, s, 0, 0, &l4));
  OK(parity_binary(PARITY_OP_ADD, l1, l2, &a));
  OK(parity_binary(PARITY_OP_ADD, l3, l4, &b));
  OK(parity_binary(PARITY_OP_SUB, a, b, &loss));
  OK(parity_backward(loss, NULL, 0));
  OK(parity_scope_keep(loss));
  OK(parity_scope_end());
  return loss;
}

/* The loss and every gradient of a and b are the same bits. */
static void same_bits(const char *what, int round, parity_tensor_t *la, model *a, parity_tensor_t *lb, model *b) {
  static float ga[NV], gb[NV];
  float x, y;
  OK(parity_tensor_to_host(la, &x, sizeof x));
  OK(parity_tensor_to_host(lb, &y, sizeof y));
  cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "%s, round %d: eager loss %.9g, replayed %.9g", what, round, x, y);
  for (int i = 0; i < NLEAF; i++) {
    parity_tensor_t *da = parity_tensor_grad(a->leaf[i]), *db = parity_tensor_grad(b->leaf[i]);
    cr_assert(da && db, "%s, round %d: leaf %d has no gradient", what, round, i);
    uint64_t bytes = (uint64_t)leaf_n[i] * sizeof(float);
    OK(parity_tensor_to_host(da, ga, bytes));
    OK(parity_tensor_to_host(db, gb, bytes));
    for (int64_t k = 0; k < leaf_n[i]; k++)
      cr_assert_eq(memcmp(&ga[k], &gb[k], sizeof ga[k]), 0,
                   "%s, round %d: leaf %d gradient [%lld]: eager %.9g, replayed %.9g", what, round, i, (long long)k,
                   ga[k], gb[k]);
  }
}

static char log_path[64];

/* A fresh plan log (PARITY_OPENCL_PLAN_LOG) for this test. */
static void log_start(void) {
  snprintf(log_path, sizeof log_path, "/tmp/parity_plan_logXXXXXX");
  int fd = mkstemp(log_path);
  cr_assert_geq(fd, 0, "mkstemp");
  close(fd);
  setenv("PARITY_OPENCL_PLAN_LOG", log_path, 1);
}

/* The log's last line; "" when empty. */
static void log_last(char *out, size_t n) {
  FILE *f = fopen(log_path, "r");
  cr_assert_not_null(f, "the plan log %s", log_path);
  char line[256];
  out[0] = 0;
  while (fgets(line, sizeof line, f)) snprintf(out, n, "%s", line);
  fclose(f);
  out[strcspn(out, "\n")] = 0;
}

static void log_stop(void) {
  unsetenv("PARITY_OPENCL_PLAN_LOG");
  unsetenv("PARITY_OPENCL_PLAN_FAIL_AT");
  unlink(log_path);
}

/* Record one step on r (inputs of round 0), then `rounds` rounds: new inputs into e and r, an
 * eager step on e, a replay on r, the same bits (checked every `every` rounds and at the end).
 * Returns the plan (the caller destroys it) and the recorded loss in *loss_out. */
static parity_plan_t *eager_vs_replay(parity_device_t *dev, model *e, model *r, int rounds, int every,
                                      parity_tensor_t **loss_out) {
  make_data(0);
  feed(r);
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *lr = step(r);
  OK(parity_plan_end(plan));
  for (int k = 1; k <= rounds; k++) {
    make_data(k);
    feed(e);
    feed(r);
    parity_tensor_t *le = step(e);
    OK(parity_plan_replay(plan));
    if (k % every == 0 || k == rounds) same_bits("eager vs replay", k, le, e, lr, r);
    parity_tensor_release(le);
  }
  *loss_out = lr;
  return plan;
}

Test(opencl_plan, replay_is_bitwise_eager_across_families_with_new_inputs, .timeout = 600) {
  parity_device_t *dev = ot_device();
  log_start();
  model e = model_new(dev), r = model_new(dev);
  parity_tensor_t *loss;
  parity_plan_t *plan = eager_vs_replay(dev, &e, &r, 4, 1, &loss);
  char last[256];
  log_last(last, sizeof last);
  long cmds = 0, live = -1;
  cr_assert_eq(sscanf(last, "prepared %ld %ld", &cmds, &live), 2, "the plugin did not prepare the plan: '%s'", last);
  /* an op may take several launches (matmul backward, a reduction with partials) */
  cr_assert_geq((uint64_t)cmds, parity_plan_command_count(plan), "prepared %ld commands for %llu", cmds,
                (unsigned long long)parity_plan_command_count(plan));
  parity_plan_destroy(plan);
  parity_tensor_release(loss);
  model_free(&e);
  model_free(&r);
  log_stop();
}

/* The plan's 10th command fails to record: the plugin keeps nothing of the recording (no kernel,
 * buffer or host copy alive), and the host replays the plan command by command, with the same
 * bits. */
Test(opencl_plan, a_failure_in_the_middle_of_prepare_leaves_nothing_and_the_host_falls_back, .timeout = 600) {
  parity_device_t *dev = ot_device();
  log_start();
  setenv("PARITY_OPENCL_PLAN_FAIL_AT", "10", 1);
  model e = model_new(dev), r = model_new(dev);
  parity_tensor_t *loss;
  parity_plan_t *plan = eager_vs_replay(dev, &e, &r, 3, 1, &loss);
  char last[256];
  log_last(last, sizeof last);
  long live = -1;
  cr_assert_eq(sscanf(last, "discarded %ld", &live), 1, "the prepare did not fail and discard: '%s'", last);
  cr_assert_eq(live, 0, "%ld plan objects alive after a discarded prepare", live);
  parity_plan_destroy(plan);
  parity_tensor_release(loss);
  model_free(&e);
  model_free(&r);
  log_stop();
}

/* Destroyed right after its replay was enqueued (before the queue ran it): the replay's results
 * are intact, and every object of the plan is released. */
Test(opencl_plan, release_right_after_run, .timeout = 600) {
  parity_device_t *dev = ot_device();
  log_start();
  model e = model_new(dev), r = model_new(dev);
  parity_tensor_t *loss;
  parity_plan_t *plan = eager_vs_replay(dev, &e, &r, 1, 1, &loss);
  make_data(99);
  feed(&e);
  feed(&r);
  parity_tensor_t *le = step(&e);
  OK(parity_plan_replay(plan));
  parity_plan_destroy(plan);
  same_bits("destroyed after its replay", 99, le, &e, loss, &r);
  char last[256];
  log_last(last, sizeof last);
  long live = -1;
  cr_assert_eq(sscanf(last, "released %ld", &live), 1, "the plan was not released: '%s'", last);
  cr_assert_eq(live, 0, "%ld plan objects alive after release", live);
  parity_tensor_release(le);
  parity_tensor_release(loss);
  model_free(&e);
  model_free(&r);
  log_stop();
}

/* 300 replays, each with new inputs, still the eager bits (checked every 50). */
Test(opencl_plan, replay_many_times, .timeout = 600) {
  parity_device_t *dev = ot_device();
  model e = model_new(dev), r = model_new(dev);
  parity_tensor_t *loss;
  parity_plan_t *plan = eager_vs_replay(dev, &e, &r, 300, 50, &loss);
  parity_plan_destroy(plan);
  parity_tensor_release(loss);
  model_free(&e);
  model_free(&r);
}
