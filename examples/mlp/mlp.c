/* mlp.c — a complete parity application: a two-layer MLP learns a 4-class problem with AdamW and a
 * cosine learning-rate schedule, its training step recorded once as a plan and replayed, then its
 * weights are saved in safetensors, loaded into a fresh model and checked to predict the same.
 *
 *   PARITY_BACKEND=cpu|opencl|vulkan|cuda ./parity-mlp [weights.safetensors]
 *
 * Exit 0 when the model learnt (test accuracy at least 90 %) and the reloaded model agrees;
 * any failure prints parity_last_error() and exits 1. Nothing is printed to stderr otherwise.
 * docs/library.md explains each piece. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parity/parity.h>
#include <parity/safetensors.h>

enum { IN = 16, HIDDEN = 64, CLASSES = 4, BATCH = 64, STEPS = 300, TEST = 512 };

/* Every parity call returns a status; on failure the message says what went wrong. */
#define CHECK(call)                                                                       \
  do {                                                                                    \
    parity_status_t st_ = (call);                                                         \
    if (st_ != PARITY_STATUS_OK) {                                                        \
      fprintf(stdout, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, parity_last_error()); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

typedef struct mlp {
  parity_tensor_t *p[4]; /* fc1.weight [HIDDEN, IN], fc1.bias, fc2.weight [CLASSES, HIDDEN], fc2.bias */
} mlp;
static const char *const names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

static mlp mlp_new(parity_device_t *dev, uint64_t seed) {
  mlp m;
  parity_generator_t gen = {.seed = seed, .offset = 0};
  CHECK(parity_init_weight(dev, PARITY_DTYPE_F32, 2, (int64_t[]){HIDDEN, IN}, PARITY_INIT_KAIMING_UNIFORM, sqrt(2.0),
                           &gen, &m.p[0]));
  CHECK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){HIDDEN}, &m.p[1]));
  CHECK(parity_init_weight(dev, PARITY_DTYPE_F32, 2, (int64_t[]){CLASSES, HIDDEN}, PARITY_INIT_XAVIER_UNIFORM, 1.0,
                           &gen, &m.p[2]));
  CHECK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){CLASSES}, &m.p[3]));
  for (int i = 0; i < 4; i++) CHECK(parity_tensor_set_requires_grad(m.p[i], 1));
  return m;
}

static void mlp_free(mlp *m) {
  for (int i = 0; i < 4; i++) parity_tensor_release(m->p[i]);
}

/* logits = fc2(relu(fc1(x))); the temporaries belong to the caller's scope */
static parity_tensor_t *forward(const mlp *m, parity_tensor_t *x) {
  parity_tensor_t *h, *a, *logits;
  CHECK(parity_linear(x, m->p[0], m->p[1], &h));
  CHECK(parity_unary(PARITY_OP_RELU, h, &a));
  CHECK(parity_linear(a, m->p[2], m->p[3], &logits));
  return logits;
}

/* The data: points in [-1, 1)^IN, labelled by which of 4 fixed directions they lean to most. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float uniform(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)(rng >> 40) / (float)(1 << 23) - 1.0f;
}
static int label_of(const float *x) {
  int best = 0;
  float score[CLASSES] = {0};
  for (int k = 0; k < CLASSES; k++) {
    for (int i = 0; i < IN; i++) score[k] += x[i] * (float)(((i * 7 + k * 3) % 5) - 2);
    if (score[k] > score[best]) best = k;
  }
  return best;
}
static void make_batch(float *x, float *onehot, int *label, int n) {
  for (int b = 0; b < n; b++) {
    for (int i = 0; i < IN; i++) x[b * IN + i] = uniform();
    int c = label_of(x + b * IN);
    if (label) label[b] = c;
    if (onehot)
      for (int k = 0; k < CLASSES; k++) onehot[b * CLASSES + k] = k == c;
  }
}

/* Test accuracy, with gradients off (no graph is recorded). */
static double accuracy(parity_device_t *dev, const mlp *m, const float *x, const int *label, int32_t *pred) {
  int was = parity_grad_mode_set(0);
  CHECK(parity_scope_begin());
  parity_tensor_t *xt, *arg;
  CHECK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){TEST, IN}, x, &xt));
  CHECK(parity_reduce(PARITY_OP_ARGMAX, forward(m, xt), 1u << 1, 0, &arg));
  int64_t idx[TEST];
  CHECK(parity_tensor_to_host(arg, idx, sizeof idx));
  CHECK(parity_scope_end());
  parity_grad_mode_set(was);
  int right = 0;
  for (int i = 0; i < TEST; i++) {
    pred[i] = (int32_t)idx[i];
    right += pred[i] == label[i];
  }
  return (double)right / TEST;
}

int main(int argc, char **argv) {
  const char *weights = argc > 1 ? argv[1] : "parity-mlp.safetensors";
  parity_context_t *ctx;
  parity_device_t *dev;
  CHECK(parity_context_create(NULL, &ctx)); /* PARITY_BACKEND picks the device */
  CHECK(parity_context_default_device(ctx, &dev));
  printf("device: %s\n", parity_device_backend(dev));

  mlp m = mlp_new(dev, 42);
  parity_optimizer_t *opt;
  CHECK(parity_adamw_create(m.p, 4, 1e-2, 0.9, 0.999, 1e-8, 1e-4, &opt));
  /* the step's inputs: written before each replay */
  static float xb[BATCH * IN], tb[BATCH * CLASSES];
  parity_tensor_t *x, *target;
  CHECK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, IN}, &x));
  CHECK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, CLASSES}, &target));

  /* Step 0 eagerly, with gradient-norm clipping: it reads a value back, so it stays out of the plan. */
  make_batch(xb, tb, NULL, BATCH);
  CHECK(parity_tensor_write(x, xb, sizeof xb));
  CHECK(parity_tensor_write(target, tb, sizeof tb));
  double first_loss, norm;
  CHECK(parity_scope_begin());
  {
    parity_tensor_t *loss;
    CHECK(parity_cross_entropy(forward(&m, x), target, &loss));
    CHECK(parity_backward(loss, NULL, 0));
    CHECK(parity_tensor_item(loss, &first_loss));
    CHECK(parity_clip_grad_norm(m.p, 4, 5.0, &norm));
    CHECK(parity_optimizer_step(opt));
  }
  CHECK(parity_scope_end());

  /* Steps 1..: record one step as a plan, then replay it with new batches. The loss tensor is
   * the plan's: each replay refills it. */
  parity_plan_t *plan;
  parity_tensor_t *loss;
  CHECK(parity_plan_begin(dev, &plan));
  CHECK(parity_scope_begin());
  CHECK(parity_optimizer_zero_grad(opt));
  CHECK(parity_cross_entropy(forward(&m, x), target, &loss));
  CHECK(parity_backward(loss, NULL, 0));
  CHECK(parity_optimizer_step(opt));
  CHECK(parity_scope_keep(loss));
  CHECK(parity_scope_end());
  CHECK(parity_plan_end(plan)); /* recording ran step 1 with batch 0 */
  double last_loss = 0;
  for (int s = 2; s < STEPS; s++) {
    CHECK(parity_optimizer_set_lr(opt, parity_lr_cosine(1e-2, 1e-4, (uint64_t)s, STEPS)));
    make_batch(xb, tb, NULL, BATCH);
    CHECK(parity_tensor_write(x, xb, sizeof xb));
    CHECK(parity_tensor_write(target, tb, sizeof tb));
    CHECK(parity_plan_replay(plan));
    if (s % 100 == 0 || s == STEPS - 1) {
      CHECK(parity_tensor_item(loss, &last_loss));
      printf("step %d: loss %.4f\n", s, last_loss);
    }
  }
  parity_plan_destroy(plan);
  parity_tensor_release(loss);

  static float xt[TEST * IN];
  static int label[TEST];
  int32_t pred[TEST], pred2[TEST];
  make_batch(xt, NULL, label, TEST);
  double acc = accuracy(dev, &m, xt, label, pred);
  printf("loss %.4f -> %.4f (first gradient norm %.3f), test accuracy %.1f %%\n", first_loss, last_loss, norm,
         100 * acc);

  /* Save, load into a fresh model, and predict again: the same classes, image for image. */
  CHECK(parity_save_safetensors(weights, names, m.p, 4, NULL, NULL, 0));
  mlp m2 = mlp_new(dev, 7);
  CHECK(parity_load_safetensors(weights, names, m2.p, 4, 0));
  accuracy(dev, &m2, xt, label, pred2);
  int same = !memcmp(pred, pred2, sizeof pred);
  printf("saved %s; reloaded model predicts %s\n", weights, same ? "the same classes" : "DIFFERENT classes");

  mlp_free(&m2);
  parity_optimizer_destroy(opt);
  mlp_free(&m);
  parity_tensor_release(x);
  parity_tensor_release(target);
  parity_context_destroy(ctx);
  return acc >= 0.9 && last_loss < first_loss && same ? 0 : 1;
}
