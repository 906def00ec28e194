/* Plans (capture once, replay many) and the caching allocator. */
#define _GNU_SOURCE /* setenv, RTLD_NOLOAD */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"

typedef struct mlp {
  parity_tensor_t *w1, *b1, *w2, *b2;
} mlp;

static mlp make_mlp(parity_device_t *dev, int32_t dt) {
  mlp m;
  OK(parity_tensor_rand_normal(dev, (parity_dtype_t)dt, 2, (int64_t[]){16, 8}, 0, 0.3, 7, 0, &m.w1));
  OK(parity_tensor_rand_normal(dev, (parity_dtype_t)dt, 1, (int64_t[]){16}, 0, 0.1, 7, 1000, &m.b1));
  OK(parity_tensor_rand_normal(dev, (parity_dtype_t)dt, 2, (int64_t[]){4, 16}, 0, 0.3, 7, 2000, &m.w2));
  OK(parity_tensor_rand_normal(dev, (parity_dtype_t)dt, 1, (int64_t[]){4}, 0, 0.1, 7, 3000, &m.b2));
  parity_tensor_t *p[4] = {m.w1, m.b1, m.w2, m.b2};
  for (int i = 0; i < 4; i++) OK(parity_tensor_set_requires_grad(p[i], 1));
  return m;
}

/* loss = mse(linear(sin(linear(x))), target); backward. Returns the loss. */
static parity_tensor_t *step(mlp *m, parity_tensor_t *x, parity_tensor_t *target) {
  parity_tensor_t *h, *a, *y, *loss;
  OK(parity_linear(x, m->w1, m->b1, &h));
  OK(parity_unary(PARITY_OP_SIN, h, &a));
  OK(parity_linear(a, m->w2, m->b2, &y));
  OK(parity_mse_loss(y, target, &loss));
  OK(parity_backward(loss, NULL, 0));
  parity_tensor_release(h);
  parity_tensor_release(a);
  parity_tensor_release(y);
  return loss;
}

static void read_bits(parity_tensor_t *t, void *dst, size_t bytes) { OK(parity_tensor_to_host(t, dst, bytes)); }

static void zero_grads(mlp *m) {
  parity_tensor_zero_grad(m->w1);
  parity_tensor_zero_grad(m->b1);
  parity_tensor_zero_grad(m->w2);
  parity_tensor_zero_grad(m->b2);
}

static int64_t allocated;
static int64_t alloc_calls;
static void count_alloc(void *user, int64_t delta) {
  (void)user;
  allocated += delta;
  if (delta > 0) alloc_calls++;
}

Test(plan, replay_is_bitwise_equal_to_eager_and_allocates_nothing) {
  parity_device_t *dev = pt_device("cpu");
  mlp m = make_mlp(dev, PARITY_DTYPE_F32);
  parity_tensor_t *x, *target, *x2;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, 0, 1, 11, 0, &x));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 4}, 0, 1, 12, 0, &target));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, 0, 1, 13, 0, &x2));
  float x2v[40];
  read_bits(x2, x2v, sizeof x2v);

  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *loss_cap = step(&m, x, target);
  OK(parity_plan_end(plan));
  cr_assert_gt(parity_plan_command_count(plan), 10);
  parity_tensor_t *g1 = parity_tensor_retain(parity_tensor_grad(m.w1));
  parity_tensor_t *g2 = parity_tensor_retain(parity_tensor_grad(m.b2));

  /* replay on new inputs, counting device allocations */
  OK(parity_tensor_write(x, x2v, sizeof x2v));
  allocated = alloc_calls = 0;
  parity_context_set_alloc_hook(parity_device_context(dev), count_alloc, NULL);
  OK(parity_plan_replay(plan));
  parity_context_set_alloc_hook(parity_device_context(dev), NULL, NULL);
  cr_assert_eq(alloc_calls, 0, "replay asked the device for memory %lld times", (long long)alloc_calls);
  float lr, gw1r[128], gb2r[4];
  read_bits(loss_cap, &lr, sizeof lr);
  read_bits(g1, gw1r, sizeof gw1r);
  read_bits(g2, gb2r, sizeof gb2r);

  /* eager on the same inputs */
  zero_grads(&m);
  parity_tensor_t *loss_e = step(&m, x, target);
  float le, gw1e[128], gb2e[4];
  read_bits(loss_e, &le, sizeof le);
  read_bits(parity_tensor_grad(m.w1), gw1e, sizeof gw1e);
  read_bits(parity_tensor_grad(m.b2), gb2e, sizeof gb2e);
  cr_assert_eq(memcmp(&lr, &le, sizeof lr), 0, "loss: replay %.9g, eager %.9g", lr, le);
  cr_assert_eq(memcmp(gw1r, gw1e, sizeof gw1r), 0, "w1 gradient differs between replay and eager");
  cr_assert_eq(memcmp(gb2r, gb2e, sizeof gb2r), 0, "b2 gradient differs between replay and eager");

  /* and the replay really computed something new */
  float l1;
  parity_plan_destroy(plan);
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, 0, 1, 11, 0, &x2));
  zero_grads(&m);
  parity_tensor_t *loss_1 = step(&m, x2, target);
  read_bits(loss_1, &l1, sizeof l1);
  cr_assert_neq(l1, le, "inputs changed, so the loss must change");
  parity_tensor_t *all[] = {x, target, x2, loss_cap, g1, g2, loss_e, loss_1, m.w1, m.b1, m.w2, m.b2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(plan, misuse_is_reported) {
  parity_device_t *dev = pt_device("cpu");
  parity_plan_t *p, *q;
  OK(parity_plan_begin(dev, &p));
  cr_assert_eq(parity_plan_begin(dev, &q), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert_eq(parity_plan_replay(p), PARITY_STATUS_FAILED_PRECONDITION);
  OK(parity_plan_end(p));
  cr_assert_eq(parity_plan_end(p), PARITY_STATUS_FAILED_PRECONDITION);
  OK(parity_plan_replay(p));
  parity_plan_destroy(p);
}

Test(allocator, steady_state_training_step_allocates_no_device_memory) {
  parity_device_t *dev = pt_device("cpu");
  mlp m = make_mlp(dev, PARITY_DTYPE_F32);
  parity_tensor_t *x, *target;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, 0, 1, 11, 0, &x));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 4}, 0, 1, 12, 0, &target));
  parity_optimizer_t *opt;
  parity_tensor_t *params[4] = {m.w1, m.b1, m.w2, m.b2};
  OK(parity_adam_create(params, 4, 0.01, 0.9, 0.999, 1e-8, &opt));
  int64_t calls[4];
  for (int s = 0; s < 4; s++) {
    allocated = alloc_calls = 0;
    parity_context_set_alloc_hook(parity_device_context(dev), count_alloc, NULL);
    parity_optimizer_zero_grad(opt);
    parity_tensor_t *loss = step(&m, x, target);
    OK(parity_optimizer_step(opt));
    parity_tensor_release(loss);
    parity_context_set_alloc_hook(parity_device_context(dev), NULL, NULL);
    calls[s] = alloc_calls;
  }
  cr_assert_gt(calls[0], 0, "the first step fills the cache");
  cr_assert_eq(calls[2], 0, "step 3 asked the device for memory %lld times", (long long)calls[2]);
  cr_assert_eq(calls[3], 0, "step 4 asked the device for memory %lld times", (long long)calls[3]);
  parity_optimizer_destroy(opt);
  parity_tensor_t *all[] = {x, target, m.w1, m.b1, m.w2, m.b2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

/* ---- prepared steps: a plan binds tensors, not their contents -------------------------------- */
Test(plan, data_written_into_a_captured_input_is_what_replay_computes_with) {
  parity_device_t *dev = pt_device("cpu");
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 2, (double[]){1, 2}), *y;
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  OK(parity_plan_end(plan));
  OK(parity_tensor_write(x, (double[]){5, 6}, 2 * sizeof(double)));
  OK(parity_plan_replay(plan));
  expect_values(y, (double[]){-5, -6}, 2); /* never reset to the captured [1, 2] */
  parity_tensor_release(x);
  OK(parity_plan_replay(plan)); /* x released: the plan keeps its storage alive */
  expect_values(y, (double[]){-5, -6}, 2);
  parity_tensor_release(y);
  parity_plan_destroy(plan);
}

typedef struct trainer {
  parity_device_t *dev;
  mlp m;
  parity_tensor_t *x, *target;
  parity_optimizer_t *opt;
} trainer;

static trainer trainer_new(parity_device_t *dev, int adam) {
  trainer t = {.dev = dev, .m = make_mlp(dev, PARITY_DTYPE_F32)};
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, &t.x));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 4}, &t.target));
  parity_tensor_t *p[4] = {t.m.w1, t.m.b1, t.m.w2, t.m.b2};
  if (adam)
    OK(parity_adam_create(p, 4, 0.01, 0.9, 0.999, 1e-8, &t.opt));
  else
    OK(parity_sgd_create(p, 4, 0.05, 0.9, &t.opt));
  return t;
}

/* the batch of step s: new inputs and targets from the generator, written into the same tensors */
static void feed(trainer *t, int s) {
  parity_tensor_t *a, *b;
  OK(parity_tensor_rand_normal(t->dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 8}, 0, 1, 21, (uint64_t)s << 32, &a));
  OK(parity_tensor_rand_normal(t->dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 4}, 0, 1, 22, (uint64_t)s << 32, &b));
  float av[40], bv[20];
  read_bits(a, av, sizeof av);
  read_bits(b, bv, sizeof bv);
  OK(parity_tensor_write(t->x, av, sizeof av));
  OK(parity_tensor_write(t->target, bv, sizeof bv));
  parity_tensor_release(a);
  parity_tensor_release(b);
}

/* zero_grad -> forward -> MSE -> backward -> optimizer step; returns the loss tensor */
static parity_tensor_t *train_step(trainer *t) {
  parity_optimizer_zero_grad(t->opt);
  parity_tensor_t *loss = step(&t->m, t->x, t->target);
  OK(parity_optimizer_step(t->opt));
  return loss;
}

static void trainer_free(trainer *t) {
  parity_optimizer_destroy(t->opt);
  parity_tensor_t *all[] = {t->m.w1, t->m.b1, t->m.w2, t->m.b2, t->x, t->target};
  for (int i = 0; i < 6; i++) parity_tensor_release(all[i]);
}

/* 20 steps eager and 20 steps as one recorded step replayed with new batches (and a learning-rate
 * change half-way): the same losses and parameters, bit for bit. */
static void replayed_training_matches_eager(const char *backend, int adam) {
  parity_device_t *dev = pt_try_device(backend);
  if (!dev) cr_skip_test("no %s device here", backend);
  enum { STEPS = 20 };
  trainer e = trainer_new(dev, adam), r = trainer_new(dev, adam);
  float le[STEPS], lr[STEPS];
  for (int s = 0; s < STEPS; s++) {
    if (0) OK(parity_optimizer_set_lr(e.opt, adam ? 0.002 : 0.01));
    feed(&e, s);
    parity_tensor_t *loss = train_step(&e);
    read_bits(loss, &le[s], sizeof le[s]);
    parity_tensor_release(loss);
  }
  parity_plan_t *plan;
  feed(&r, 0);
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *loss = train_step(&r); /* step 0, recorded as it runs */
  OK(parity_plan_end(plan));
  read_bits(loss, &lr[0], sizeof lr[0]);
  for (int s = 1; s < STEPS; s++) {
    if (0) OK(parity_optimizer_set_lr(r.opt, adam ? 0.002 : 0.01));
    feed(&r, s);
    OK(parity_plan_replay(plan));
    read_bits(loss, &lr[s], sizeof lr[s]);
  }
  for (int s = 0; s < STEPS; s++)
    cr_assert_eq(memcmp(&le[s], &lr[s], sizeof le[s]), 0, "%s step %d: eager loss %.9g, replayed %.9g", backend, s,
                 le[s], lr[s]);
  cr_assert_lt(le[STEPS - 1], le[0]);
  float pe[128], pr[128];
  read_bits(e.m.w1, pe, sizeof pe);
  read_bits(r.m.w1, pr, sizeof pr);
  cr_assert_eq(memcmp(pe, pr, sizeof pe), 0, "%s: parameters differ after %d steps", backend, STEPS);
  parity_tensor_release(loss);
  parity_plan_destroy(plan);
  trainer_free(&e);
  trainer_free(&r);
}

Test(plan, a_captured_adam_training_step_replays_like_the_eager_loop_on_cpu) {
  replayed_training_matches_eager("cpu", 1);
}
Test(plan, a_captured_sgd_momentum_step_replays_like_the_eager_loop_on_cpu) {
  replayed_training_matches_eager("cpu", 0);
}
Test(plan, a_captured_adam_training_step_replays_like_the_eager_loop_on_opencl, .timeout = 300) {
  replayed_training_matches_eager("opencl", 1);
}

Test(plan, an_optimizer_cannot_be_created_while_recording) {
  parity_device_t *dev = pt_device("cpu");
  mlp m = make_mlp(dev, PARITY_DTYPE_F32);
  parity_plan_t *plan;
  parity_optimizer_t *opt = (parity_optimizer_t *)1;
  OK(parity_plan_begin(dev, &plan));
  cr_assert_eq(parity_adam_create(&m.w1, 1, 0.01, 0.9, 0.999, 1e-8, &opt), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "create it before recording a plan"), "%s", parity_last_error());
  cr_assert_null(opt);
  OK(parity_plan_end(plan));
  parity_plan_destroy(plan);
  parity_tensor_t *all[] = {m.w1, m.b1, m.w2, m.b2};
  for (int i = 0; i < 4; i++) parity_tensor_release(all[i]);
}

/* Replay is a flat list of prepared launches: the kernel entry is called directly with the
 * recorded descriptor, without asking supports() or re-validating (parity_plugin.h: one
 * validation per op). Counted in the loader tests' fake plugin. */
Test(plan, replay_calls_kernel_entries_directly_without_asking_supports_again) {
  parity_context_t *ctx = context_with_fake_plugins();
  parity_device_t *dev = named_device(ctx, "fakenormal");
  void *mod = dlopen(FAKE_PLUGIN_DIR "/parity-plugin-fakenormal.so", RTLD_NOW | RTLD_NOLOAD);
  cr_assert(mod, "the fake plugin is loaded: %s", dlerror());
  void (*counts)(uint64_t *, uint64_t *) = (void (*)(uint64_t *, uint64_t *))dlsym(mod, "fake_call_counts");
  cr_assert(counts);
  float v[3] = {1, -2, 3}, got[3];
  parity_tensor_t *x, *y = NULL;
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, v, &x));
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  OK(parity_plan_end(plan));
  uint64_t s0, e0, s1, e1;
  counts(&s0, &e0);
  cr_assert_eq(e0, 1, "eager: one entry call (got %llu)", (unsigned long long)e0);
  cr_assert_geq(s0, 1, "eager: supports() was asked");
  for (int i = 0; i < 100; i++) {
    v[0] = (float)i;
    OK(parity_tensor_write(x, v, sizeof v));
    OK(parity_plan_replay(plan));
  }
  counts(&s1, &e1);
  cr_assert_eq(e1 - e0, 100, "one entry call per replay (got %llu)", (unsigned long long)(e1 - e0));
  cr_assert_eq(s1, s0, "replay asked supports() %llu more times", (unsigned long long)(s1 - s0));
  OK(parity_tensor_to_host(y, got, sizeof got));
  cr_assert(got[0] == -99.0f && got[1] == 2.0f && got[2] == -3.0f);
  parity_plan_destroy(plan);
  parity_tensor_release(x);
  parity_tensor_release(y);
  dlclose(mod);
  parity_context_destroy(ctx);
}

/* ---- the plugin's own plans (ABI 1.1 plan entries), on the NEWER fake ------------------------ */
typedef struct fake_plan_ctl {
  void *mod;
  void (*mode)(int);
  void (*counts)(uint64_t *, uint64_t *, uint64_t *);
  void (*calls)(uint64_t *, uint64_t *);
} fake_plan_ctl;

static fake_plan_ctl fake_plan(int mode) {
  fake_plan_ctl c;
  c.mod = dlopen(FAKE_PLUGIN_DIR "/parity-plugin-fakenewer.so", RTLD_NOW | RTLD_NOLOAD);
  cr_assert(c.mod, "the newer fake plugin is loaded: %s", dlerror());
  c.mode = (void (*)(int))dlsym(c.mod, "fake_plan_mode");
  c.counts = (void (*)(uint64_t *, uint64_t *, uint64_t *))dlsym(c.mod, "fake_plan_counts");
  c.calls = (void (*)(uint64_t *, uint64_t *))dlsym(c.mod, "fake_call_counts");
  cr_assert(c.mode && c.counts && c.calls);
  c.mode(mode);
  return c;
}

/* Record y = neg(x) on the newer fake with the given plan mode; returns the plan_end status. */
static parity_status_t record_neg(parity_device_t *dev, parity_tensor_t **x, parity_tensor_t **y,
                                  parity_plan_t **plan) {
  float v[3] = {1, -2, 3};
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, v, x));
  OK(parity_plan_begin(dev, plan));
  OK(parity_unary(PARITY_OP_NEG, *x, y));
  return parity_plan_end(*plan);
}

/* One plan-entry case on the newer fake: its context, device, controls and y = neg(x) recorded. */
typedef struct newer_case {
  parity_context_t *ctx;
  fake_plan_ctl c;
  parity_tensor_t *x, *y;
  parity_plan_t *plan;
  parity_status_t end;               /* what plan_end returned */
  uint64_t prepares, runs, releases; /* the plan-entry counts before recording */
} newer_case;

static newer_case newer_open(int mode) {
  newer_case k;
  k.ctx = context_with_fake_plugins();
  parity_device_t *dev = named_device(k.ctx, "fakenewer");
  k.c = fake_plan(mode);
  k.c.counts(&k.prepares, &k.runs, &k.releases);
  k.end = record_neg(dev, &k.x, &k.y, &k.plan);
  return k;
}

static void newer_close(newer_case *k) {
  parity_plan_destroy(k->plan);
  parity_tensor_release(k->x);
  parity_tensor_release(k->y);
  k->c.mode(0);
  dlclose(k->c.mod);
  parity_context_destroy(k->ctx);
}

Test(plan, a_plugin_with_plan_entries_receives_the_plan_once_and_replays_it_whole) {
  newer_case k = newer_open(0);
  OK(k.end);
  uint64_t p0 = k.prepares, r0 = k.runs, l0 = k.releases, s0, e0, p1, r1, l1, s1, e1;
  k.c.calls(&s0, &e0);
  float v[3] = {0, -2, 3}, got[3];
  for (int i = 0; i < 50; i++) {
    v[0] = (float)i;
    OK(parity_tensor_write(k.x, v, sizeof v));
    OK(parity_plan_replay(k.plan));
  }
  k.c.counts(&p1, &r1, &l1);
  k.c.calls(&s1, &e1);
  cr_assert_eq(p1 - p0, 1, "plan_prepare once at plan_end (got %llu)", (unsigned long long)(p1 - p0));
  cr_assert_eq(r1 - r0, 50, "plan_run once per replay (got %llu)", (unsigned long long)(r1 - r0));
  cr_assert_eq(s1, s0, "no supports() in replay");
  cr_assert_eq(e1 - e0, 50, "the plugin's plan ran its neg 50 times (got %llu)", (unsigned long long)(e1 - e0));
  OK(parity_tensor_to_host(k.y, got, sizeof got));
  cr_assert(got[0] == -49.0f && got[1] == 2.0f && got[2] == -3.0f, "replay used the new input: %g %g %g", got[0],
            got[1], got[2]);
  parity_plan_destroy(k.plan);
  k.plan = NULL;
  k.c.counts(&p1, &r1, &l1);
  cr_assert_eq(l1 - l0, 1, "plan_release once when the plan is destroyed");
  newer_close(&k);
}

Test(plan, a_plugin_that_declines_is_replayed_command_by_command) {
  newer_case k = newer_open(1);
  OK(k.end);
  uint64_t p0, r0, l0, s0, e0, r1, l1, s1, e1;
  k.c.counts(&p0, &r0, &l0);
  k.c.calls(&s0, &e0);
  for (int i = 0; i < 10; i++) OK(parity_plan_replay(k.plan));
  k.c.counts(&p0, &r1, &l1);
  k.c.calls(&s1, &e1);
  cr_assert_eq(r1 - r0, 0, "a declined plan is never run");
  cr_assert_eq(e1 - e0, 10, "the host called the entry per replay (got %llu)", (unsigned long long)(e1 - e0));
  newer_close(&k);
}

Test(plan, a_plugin_claiming_a_plan_it_did_not_return_fails_plan_end_clearly) {
  newer_case k = newer_open(2);
  cr_assert_eq(k.end, PARITY_STATUS_INTERNAL);
  cr_assert(strstr(parity_last_error(), "'fakenewer' said plan_prepare succeeded but returned no plan"), "%s",
            parity_last_error());
  cr_assert_eq(parity_plan_replay(k.plan), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "plan_end said why"), "%s", parity_last_error());
  newer_close(&k);
}

Test(plan, a_failing_prepared_plan_names_the_plugin_and_its_reason) {
  newer_case k = newer_open(3);
  OK(k.end);
  cr_assert_eq(parity_plan_replay(k.plan), PARITY_STATUS_DEVICE_ERROR);
  cr_assert(strstr(parity_last_error(), "plan_replay: the prepared plan (1 commands) failed on 'fakenewer'") &&
                strstr(parity_last_error(), "device fault (simulated)"),
            "%s", parity_last_error());
  newer_close(&k);
}

/* The CPU plugin's prepared plan against the host's command-by-command replay and against eager
 * execution: the same bits, for every family (conv, pooling, softmax, reductions over axes,
 * broadcasting elementwise, batched matmul, fills). */
Test(plan, cpu_prepared_plans_give_the_bits_of_eager_execution) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *w, *xm, *wm;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){2, 3, 9, 9}, 0, 1, 21, 0, &x));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){4, 3, 3, 3}, 0, 0.3, 22, 0, &w));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 3, (int64_t[]){2, 7, 5}, 0, 1, 23, 0, &xm));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 6}, 0, 1, 24, 0, &wm));
  parity_tensor_t *params[2] = {w, wm};
  for (int i = 0; i < 2; i++) OK(parity_tensor_set_requires_grad(params[i], 1));
  float out[3][2][108];
  parity_plan_t *plans[2] = {NULL, NULL};
  for (int pass = 0; pass < 3; pass++) { /* 0 eager, 1 prepared replay, 2 command-by-command replay */
    if (pass == 2) setenv("PARITY_PLAN_PREPARE", "0", 1);
    if (pass >= 1) OK(parity_plan_begin(dev, &plans[pass - 1]));
    parity_tensor_zero_grad(w);
    parity_tensor_zero_grad(wm);
    parity_conv2d_options_t co;
    parity_conv2d_options_init(&co);
    co.stride[0] = co.stride[1] = 2;
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 1;
    parity_pool2d_options_t po;
    parity_pool2d_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    parity_tensor_t *c, *pool, *sm, *mm, *t, *s1, *s2, *loss;
    OK(parity_conv2d(x, w, NULL, &co, &c));
    OK(parity_pool2d(PARITY_OP_MAX_POOL2D, c, &po, &pool));
    OK(parity_softmax(PARITY_OP_SOFTMAX, pool, -1, &sm));
    OK(parity_matmul(xm, wm, &mm));
    OK(parity_unary(PARITY_OP_TANH, mm, &t));
    OK(parity_reduce(PARITY_OP_SUM, sm, 0x3, 1, &s1));
    OK(parity_reduce(PARITY_OP_MEAN, t, 0x7, 0, &s2));
    OK(parity_binary(PARITY_OP_MUL, s2, s2, &loss));
    parity_tensor_t *l2;
    OK(parity_reduce(PARITY_OP_SUM, s1, 0xf, 0, &l2));
    parity_tensor_t *total;
    OK(parity_binary(PARITY_OP_ADD, loss, l2, &total));
    OK(parity_backward(total, NULL, 0));
    if (pass >= 1) {
      OK(parity_plan_end(plans[pass - 1]));
      OK(parity_plan_replay(plans[pass - 1]));
    }
    cr_assert_eq(parity_tensor_numel(parity_tensor_grad(w)), 108);
    OK(parity_tensor_to_host(parity_tensor_grad(w), out[pass][0], sizeof out[pass][0]));
    OK(parity_tensor_to_host(parity_tensor_grad(wm), out[pass][1], 30 * sizeof(float)));
    parity_tensor_t *tmp[] = {c, pool, sm, mm, t, s1, s2, loss, l2, total};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) parity_tensor_release(tmp[i]);
  }
  unsetenv("PARITY_PLAN_PREPARE");
  cr_assert(memcmp(out[0][0], out[1][0], sizeof out[0][0]) == 0, "conv weight gradient: prepared replay != eager");
  cr_assert(memcmp(out[0][1], out[1][1], 30 * sizeof(float)) == 0, "matmul gradient: prepared replay != eager");
  cr_assert(memcmp(out[2][0], out[1][0], sizeof out[0][0]) == 0, "conv: prepared != command-by-command replay");
  cr_assert(memcmp(out[2][1], out[1][1], 30 * sizeof(float)) == 0, "matmul: prepared != command-by-command replay");
  for (int i = 0; i < 2; i++) parity_plan_destroy(plans[i]);
  parity_tensor_t *all[] = {x, w, xm, wm};
  for (int i = 0; i < 4; i++) parity_tensor_release(all[i]);
}

/* A tensor the plan fills (full, zeros, ones while recording) is refilled on every replay: a
 * write into it would be silently undone, so it is refused until the plan is destroyed. */
Test(plan, writing_into_a_tensor_the_plan_refills_is_an_error_not_silently_undone) {
  parity_device_t *dev = pt_device("cpu");
  parity_plan_t *plan;
  parity_tensor_t *c, *y;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, 2.0, &c));
  OK(parity_unary(PARITY_OP_NEG, c, &y));
  OK(parity_plan_end(plan));
  float v[3] = {5, 6, 7}, got[3];
  cr_assert_eq(parity_tensor_write(c, v, sizeof v), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "a plan refills this tensor's memory on every replay"), "%s",
            parity_last_error());
  OK(parity_plan_replay(plan));
  OK(parity_tensor_to_host(y, got, sizeof got));
  cr_assert(got[0] == -2.0f && got[2] == -2.0f, "the constant stays the plan's: %g", got[0]);
  parity_plan_destroy(plan);
  OK(parity_tensor_write(c, v, sizeof v)); /* the plan is gone: an ordinary tensor again */
  parity_tensor_release(c);
  parity_tensor_release(y);
}

/* A plugin that answers supports() by class (PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS) is asked once
 * per class for libparity's own launches, and every time for a caller's raw descriptor. */
Test(plan, supports_is_asked_once_per_class_for_the_librarys_own_launches) {
  parity_context_t *ctx = context_with_fake_plugins();
  parity_device_t *dev = named_device(ctx, "fakenewer");
  fake_plan_ctl c = fake_plan(0);
  float v[3] = {1, -2, 3};
  parity_tensor_t *x;
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, v, &x));
  uint64_t s0, e0, s1, e1;
  c.calls(&s0, &e0);
  for (int i = 0; i < 20; i++) {
    parity_tensor_t *y;
    OK(parity_unary(PARITY_OP_NEG, x, &y));
    parity_tensor_release(y);
  }
  c.calls(&s1, &e1);
  cr_assert_eq(e1 - e0, 20);
  cr_assert_leq(s1 - s0, 1, "20 negs of one class asked supports() %llu times", (unsigned long long)(s1 - s0));
  /* the unsupported class (f64) is asked, refused, and stays refused */
  parity_tensor_t *x64, *y64 = NULL;
  OK(parity_tensor_full(dev, PARITY_DTYPE_F64, 1, (int64_t[]){3}, 1.0, &x64));
  for (int i = 0; i < 2; i++) cr_assert_eq(parity_unary(PARITY_OP_NEG, x64, &y64), PARITY_STATUS_UNSUPPORTED);
  c.calls(&s0, &e0);
  cr_assert_eq(s0 - s1, 2, "a refusal is never remembered as OK");
  parity_tensor_release(x64);
  parity_tensor_release(x);
  dlclose(c.mod);
  parity_context_destroy(ctx);
}

/* Issue 38, item 7: a plan destroyed twice (or used after destroy) is refused like a tensor's double
 * release, not a use-after-free. */
Test(plan, destroying_a_plan_twice_is_detected) {
  parity_device_t *dev = pt_device("cpu");
  int64_t n = 4;
  parity_tensor_t *x, *y;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, 1, &n, &x));
  parity_plan_t *p;
  OK(parity_plan_begin(dev, &p));
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  OK(parity_plan_end(p));
  parity_plan_destroy(p);
  parity_plan_destroy(p);
  cr_assert(strstr(parity_last_error(), "plan_destroy: the plan was already destroyed"), "%s", parity_last_error());
  cr_assert_eq(parity_plan_replay(p), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "plan_replay: the plan was already destroyed"), "%s", parity_last_error());
  cr_assert_eq(parity_plan_end(p), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_plan_command_count(p), 0);
  parity_tensor_release(y);
  parity_tensor_release(x);
}

/* ... and a plan records only its own thread's ops: another thread's run eagerly, unrecorded */
typedef struct other_thread_arg {
  parity_tensor_t *x;
  parity_status_t st;
} other_thread_arg;

static void *other_thread(void *a) {
  other_thread_arg *o = a;
  parity_tensor_t *y = NULL;
  o->st = parity_unary(PARITY_OP_EXP, o->x, &y);
  parity_tensor_release(y);
  return NULL;
}

Test(plan, another_threads_ops_are_not_recorded) {
  parity_device_t *dev = pt_device("cpu");
  int64_t n = 4;
  parity_tensor_t *x, *y;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, 1, &n, &x));
  parity_plan_t *p;
  OK(parity_plan_begin(dev, &p));
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  other_thread_arg arg = {x, PARITY_STATUS_INTERNAL};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, other_thread, &arg), 0);
  cr_assert_eq(pthread_join(t, NULL), 0);
  cr_assert_eq(arg.st, PARITY_STATUS_OK, "%s", parity_last_error());
  OK(parity_plan_end(p));
  cr_assert_eq(parity_plan_command_count(p), 1, "the other thread's exp was recorded");
  parity_plan_destroy(p);
  parity_tensor_release(y);
  parity_tensor_release(x);
}

/* Issue 38, item 7: a tensor a plan fills (a constant, a parameter made while recording) is that
 * plan's: an eager optimizer step writing it outside the plan would be undone by the next replay,
 * so it is refused, as parity_tensor_write is. */
Test(plan, an_eager_write_into_a_plan_constant_is_refused_not_silently_reverted) {
  parity_device_t *dev = pt_device("cpu");
  int64_t n = 4;
  parity_tensor_t *x, *w, *y, *loss;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, 1, &n, &x));
  parity_plan_t *p;
  OK(parity_plan_begin(dev, &p));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, &n, 2.0, &w)); /* filled while recording */
  OK(parity_tensor_set_requires_grad(w, 1));
  OK(parity_binary(PARITY_OP_MUL, w, x, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  OK(parity_plan_end(p));
  parity_optimizer_t *sgd;
  OK(parity_sgd_create(&w, 1, 0.5, 0, &sgd));
  cr_assert_eq(parity_optimizer_step(sgd), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "a plan refills on every replay"), "%s", parity_last_error());
  double v[4];
  OK(parity_tensor_to_f64(w, v, 4));
  cr_assert_eq(v[0], 2.0, "the refused step changed the constant");
  parity_optimizer_destroy(sgd);
  parity_plan_destroy(p);
  OK(parity_tensor_set_requires_grad(w, 1)); /* the plan gone, the tensor is the caller's again */
  parity_tensor_release(loss);
  parity_tensor_release(y);
  parity_tensor_release(w);
  parity_tensor_release(x);
}

/* a replay of the plan issues exactly n commands (those recorded less what core/src/plan_prune.c
 * leaves out) */
static void expect_commands(parity_plan_t *plan, uint64_t n) {
  cr_assert_eq(parity_plan_command_count(plan), n, "a replay issues %llu commands, not %llu",
               (unsigned long long)parity_plan_command_count(plan), (unsigned long long)n);
}

/* The gradient of an add is dy for both operands: the backward launches nothing for it (the plugin's
 * backward would copy dy twice). exp(a) + exp(b), summed: forward exp, exp, add, sum; backward the
 * seed's fill, sum's backward, and exp's backward for a and for b, whose results become the
 * leaves' gradients as they are, in a plan as eagerly (the plan's hold on their memory is no
 * other tensor's) — 8 commands; 9 with a launch for the add, 10 with a copy per leaf. A replay
 * issues 6: the seed's fill and sum's backward (a function of the seed alone) write the same bits
 * every time (core/src/plan_prune.c). The
 * gradients are dy's bits through exp's backward: exp(a) and exp(b). */
Test(plan, an_adds_backward_launches_nothing) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *a, *b, *ea = NULL, *eb = NULL, *y = NULL, *s = NULL;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){6}, 0, 1, 1, 0, &a));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){6}, 0, 1, 2, 0, &b));
  OK(parity_tensor_set_requires_grad(a, 1));
  OK(parity_tensor_set_requires_grad(b, 1));
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_unary(PARITY_OP_EXP, a, &ea));
  OK(parity_unary(PARITY_OP_EXP, b, &eb));
  OK(parity_binary(PARITY_OP_ADD, ea, eb, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 1, 0, &s));
  OK(parity_backward(s, NULL, 0));
  OK(parity_plan_end(plan));
  expect_commands(plan, 6);
  float ga[6], gb[6], va[6], vb[6];
  read_bits(parity_tensor_grad(a), ga, sizeof ga);
  read_bits(parity_tensor_grad(b), gb, sizeof gb);
  read_bits(ea, va, sizeof va);
  read_bits(eb, vb, sizeof vb);
  cr_assert(!memcmp(ga, va, sizeof ga) && !memcmp(gb, vb, sizeof gb), "d/da sum(exp(a) + exp(b)) is not exp(a)");
  parity_tensor_t *all[] = {a, b, ea, eb, y, s};
  for (int i = 0; i < 6; i++) parity_tensor_release(all[i]);
  parity_plan_destroy(plan);
}

/* An optimizer step fills nothing: its constants (betas, eps, decay, momentum, the step's 1) are
 * 0-d tensors it made at creation, so a recorded step is its launches alone; a moment's new value
 * is written into it, not copied there; the step's scalars are cast to a dtype once, not once per
 * parameter. Two f32 parameters on the CPU plugin (the step count and bias corrections in f64):
 * the count += 1 and its copy back; each bias correction pow, neg, add, reciprocal; lr, c1 and c2
 * cast to f32; per parameter m and v blended (mul, mul, and the add into the moment) around g's
 * square, v c2, sqrt, + eps, m c1, the quotient, p - lr u (mul, and the sub written into p: an
 * in-place forward): 14 — 41 commands; 43 with p's copy back (2026-12-06), 47 with the moments'
 * copies, 50 with the casts per parameter, 65 with a fill per constant too (the library before,
 * 2026-12-06). AdamW adds lr times the decay once and p - that p (mul, sub into p) per parameter;
 * SGD with momentum is the count, one cast and per parameter a blend and the update. */
Test(plan, an_optimizer_step_fills_nothing) {
  parity_device_t *dev = pt_device("cpu");
  static const struct {
    const char *name;
    uint64_t commands;
  } kinds[] = {{"adam", 41}, {"adamw", 46}, {"sgd momentum", 13}};
  for (int k = 0; k < 3; k++) {
    parity_tensor_t *w[2];
    for (int i = 0; i < 2; i++) {
      OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){4 - i}, 0, 1, 1, 0, &w[i]));
      OK(parity_tensor_set_requires_grad(w[i], 1));
    }
    parity_optimizer_t *opt = NULL;
    if (k == 0) OK(parity_adam_create(w, 2, 0.01, 0.9, 0.999, 1e-8, &opt));
    if (k == 1) OK(parity_adamw_create(w, 2, 0.01, 0.9, 0.999, 1e-8, 0.1, &opt));
    if (k == 2) OK(parity_sgd_create(w, 2, 0.01, 0.9, &opt));
    parity_tensor_t *s[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
      OK(parity_reduce(PARITY_OP_SUM, w[i], 1, 0, &s[i]));
      OK(parity_backward(s[i], NULL, 0));
    }
    parity_plan_t *plan;
    OK(parity_plan_begin(dev, &plan));
    OK(parity_optimizer_step(opt));
    OK(parity_plan_end(plan));
    cr_assert_eq(parity_plan_command_count(plan), kinds[k].commands, "%s: a recorded step of %llu commands, not %llu",
                 kinds[k].name, (unsigned long long)parity_plan_command_count(plan),
                 (unsigned long long)kinds[k].commands);
    parity_plan_destroy(plan);
    parity_optimizer_destroy(opt);
    for (int i = 0; i < 2; i++) {
      parity_tensor_release(s[i]);
      parity_tensor_release(w[i]);
    }
  }
}

/* A Linear layer's weight enters the matmul transposed (x w^T); its gradient is computed in the
 * weight's own layout and becomes w's gradient as it is, with no transposing copy. sum(x w^T + b),
 * x [3, 4], w [5, 4]: forward matmul, add, sum; backward the seed's fill, sum's backward, the
 * bias's sum over the batch, the matmul's backward — 7 commands; 8 with a transposing copy of w's
 * gradient, 10 before this session's changes. A replay issues 5: not the seed's fill nor sum's
 * backward, which write the same bits every time (core/src/plan_prune.c). */
Test(plan, a_linear_layers_weight_gradient_needs_no_transposing_copy) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *w, *b, *y = NULL, *s = NULL;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){3, 4}, 0, 1, 0, 1, &x));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){5, 4}, 0, 1, 1, 2, &w));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){5}, 0, 1, 1, 3, &b));
  OK(parity_tensor_set_requires_grad(w, 1));
  OK(parity_tensor_set_requires_grad(b, 1));
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_linear(x, w, b, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 3, 0, &s));
  OK(parity_backward(s, NULL, 0));
  OK(parity_plan_end(plan));
  expect_commands(plan, 5);
  /* d/dw sum(x w^T) = the column sums of x, for each of w's rows */
  float xv[12], gw[20];
  read_bits(x, xv, sizeof xv);
  read_bits(parity_tensor_grad(w), gw, sizeof gw);
  cr_assert(parity_tensor_is_contiguous(parity_tensor_grad(w)));
  for (int o = 0; o < 5; o++)
    for (int i = 0; i < 4; i++) {
      float want = (xv[i] + xv[4 + i]) + xv[8 + i];
      cr_assert(fabsf(gw[o * 4 + i] - want) <= 1e-6f * (1 + fabsf(want)), "dw[%d][%d] %g, want %g", o, i, gw[o * 4 + i],
                want);
    }
  parity_tensor_t *all[] = {x, w, b, y, s};
  for (int i = 0; i < 5; i++) parity_tensor_release(all[i]);
  parity_plan_destroy(plan);
}

/* BatchNorm in training writes each running statistic's new value straight into it, as the
 * optimizers write their moments: (1 - m) running and m times the batch statistic, then their sum
 * into running — no sum of its own copied back. x [4, 3, 2] f32 with both running statistics: the
 * recorded forward is 18 commands, two more with the copies (the library before 2026-12-07); a
 * replay issues BN_COMMANDS of them: not the five fills of its scalar constants, which no tensor
 * outside the plan holds (core/src/plan_prune.c). */
#define BN_COMMANDS 13
Test(plan, batch_norms_running_statistics_are_written_in_place) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *rm, *rv, *y = NULL;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 3, (int64_t[]){4, 3, 2}, 0, 1, 0, 5, &x));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, &rm));
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, &rv));
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_batch_norm(x, NULL, NULL, rm, rv, 1, 0.1, 1e-5, &y));
  OK(parity_plan_end(plan));
  expect_commands(plan, BN_COMMANDS);
  parity_plan_destroy(plan);
  parity_tensor_t *all[] = {x, rm, rv, y};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}
