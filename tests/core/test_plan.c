/* Plans (capture once, replay many) and the caching allocator. */
#include <dlfcn.h>
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
  if (adam) OK(parity_adam_create(p, 4, 0.01, 0.9, 0.999, 1e-8, &t.opt));
  else OK(parity_sgd_create(p, 4, 0.05, 0.9, &t.opt));
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

Test(plan, a_captured_adam_training_step_replays_like_the_eager_loop_on_cpu) { replayed_training_matches_eager("cpu", 1); }
Test(plan, a_captured_sgd_momentum_step_replays_like_the_eager_loop_on_cpu) { replayed_training_matches_eager("cpu", 0); }
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
