/* parity_checkpoint_save / parity_checkpoint_load and parity_optimizer_state (issue 39, library
 * support): a run stopped after k steps and resumed from its checkpoint into a fresh model and
 * optimizer ends bitwise where a run never stopped ends (Adam, AdamW, SGD with momentum, with a
 * schedule); a checkpoint of another optimizer, a weights-only file and one cut at any length are
 * refused with every tensor left as it was. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_test.h"
#include "parity/safetensors.h"

enum { IN = 6, HID = 8, OUT = 3, B = 5, STEPS = 10 };
static const char *const names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-ckpt-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}
static void remove_dir(void) { pt_remove_tree(dir); }
TestSuite(checkpoint, .init = make_dir, .fini = remove_dir);

typedef struct model {
  parity_tensor_t *p[4];
  parity_optimizer_t *opt;
} model;

typedef enum { ADAM, ADAMW, SGD } kind;

static model model_new(parity_device_t *dev, uint64_t seed, kind k) {
  model m;
  const int64_t shapes[4][2] = {{HID, IN}, {HID, 0}, {OUT, HID}, {OUT, 0}};
  for (int i = 0; i < 4; i++) {
    uint32_t rank = shapes[i][1] ? 2 : 1;
    OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, rank, shapes[i], -0.5, 0.5, seed, (uint64_t)i * 1000,
                                  &m.p[i]));
    OK(parity_tensor_set_requires_grad(m.p[i], 1));
  }
  if (k == SGD)
    OK(parity_sgd_create(m.p, 4, 0.05, 0.9, &m.opt));
  else if (k == ADAM)
    OK(parity_adam_create(m.p, 4, 0.01, 0.9, 0.999, 1e-8, &m.opt));
  else
    OK(parity_adamw_create(m.p, 4, 0.01, 0.9, 0.999, 1e-8, 0.01, &m.opt));
  return m;
}

static void model_free(model *m) {
  parity_optimizer_destroy(m->opt);
  for (int i = 0; i < 4; i++) parity_tensor_release(m->p[i]);
}

/* step s: its batch made from s alone, the cosine rate of step s */
static void train_step(parity_device_t *dev, model *m, int s) {
  double x[B * IN], t[B * OUT] = {0};
  for (int i = 0; i < B * IN; i++) x[i] = ((i * 37 + s * 11) % 17) / 17.0 - 0.5;
  for (int b = 0; b < B; b++) t[b * OUT + (b + s) % OUT] = 1;
  OK(parity_optimizer_set_lr(m->opt, parity_lr_cosine(0.01, 0.001, (uint64_t)s, STEPS)));
  OK(parity_optimizer_zero_grad(m->opt));
  OK(parity_scope_begin());
  parity_tensor_t *xt, *tt, *h, *a, *y, *loss;
  OK(parity_tensor_from_f64(dev, PARITY_DTYPE_F32, 2, (int64_t[]){B, IN}, x, &xt));
  OK(parity_tensor_from_f64(dev, PARITY_DTYPE_F32, 2, (int64_t[]){B, OUT}, t, &tt));
  OK(parity_linear(xt, m->p[0], m->p[1], &h));
  OK(parity_unary(PARITY_OP_TANH, h, &a));
  OK(parity_linear(a, m->p[2], m->p[3], &y));
  OK(parity_cross_entropy(y, tt, &loss));
  OK(parity_backward(loss, NULL, 0));
  OK(parity_optimizer_step(m->opt));
  OK(parity_scope_end());
}

static void expect_same(const model *a, const model *b, const char *what) {
  for (int i = 0; i < 4; i++) {
    float va[HID * IN], vb[HID * IN];
    uint64_t bytes = (uint64_t)parity_tensor_numel(a->p[i]) * sizeof(float);
    OK(parity_tensor_to_host(a->p[i], va, bytes));
    OK(parity_tensor_to_host(b->p[i], vb, bytes));
    cr_assert_eq(memcmp(va, vb, bytes), 0, "%s: %s differs from the uninterrupted run", what, names[i]);
  }
}

static const char *at(const char *name) {
  static char p[2][128];
  static int k;
  k ^= 1;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static void resume_is_bitwise(kind k, const char *what) {
  parity_device_t *dev = pt_device("cpu");
  model ref = model_new(dev, 1, k), run = model_new(dev, 1, k);
  for (int s = 0; s < STEPS; s++) train_step(dev, &ref, s);
  for (int s = 0; s < 4; s++) train_step(dev, &run, s);
  const char *keys[1] = {"train.step"}, *vals[1] = {"4"};
  OK(parity_checkpoint_save(at("ck.safetensors"), names, run.p, 4, run.opt, keys, vals, 1));
  model_free(&run);
  model fresh = model_new(dev, 99, k); /* other weights, a new optimizer at step 0 */
  OK(parity_checkpoint_load(at("ck.safetensors"), names, fresh.p, 4, fresh.opt, 0));
  parity_st_file f;
  char err[256];
  cr_assert_eq(parity_st_open(at("ck.safetensors"), &f, err, sizeof err), 0, "%s", err);
  int from = atoi(parity_st_metadata(&f, "train.step"));
  parity_st_free(&f);
  for (int s = from; s < STEPS; s++) train_step(dev, &fresh, s);
  expect_same(&ref, &fresh, what);
  model_free(&fresh);
  model_free(&ref);
}

Test(checkpoint, adam_resumes_bitwise) { resume_is_bitwise(ADAM, "adam"); }
Test(checkpoint, adamw_resumes_bitwise) { resume_is_bitwise(ADAMW, "adamw"); }
Test(checkpoint, sgd_momentum_resumes_bitwise) { resume_is_bitwise(SGD, "sgd"); }

/* Without the optimizer's state the resumed run is a different run: the test above can fail. */
Test(checkpoint, weights_alone_do_not_resume) {
  parity_device_t *dev = pt_device("cpu");
  model ref = model_new(dev, 1, ADAM), run = model_new(dev, 1, ADAM);
  for (int s = 0; s < STEPS; s++) train_step(dev, &ref, s);
  for (int s = 0; s < 4; s++) train_step(dev, &run, s);
  OK(parity_save_safetensors(at("w.safetensors"), names, run.p, 4, NULL, NULL, 0));
  model fresh = model_new(dev, 99, ADAM);
  OK(parity_load_safetensors(at("w.safetensors"), names, fresh.p, 4, 0));
  for (int s = 4; s < STEPS; s++) train_step(dev, &fresh, s);
  int differs = 0;
  float a[HID * IN], b[HID * IN];
  OK(parity_tensor_to_host(ref.p[0], a, sizeof a));
  OK(parity_tensor_to_host(fresh.p[0], b, sizeof b));
  differs = memcmp(a, b, sizeof a) != 0;
  cr_assert(differs, "weights alone resumed bitwise: the optimizer state is not being tested");
  /* and the weights-only file is not a checkpoint */
  cr_assert_eq(parity_checkpoint_load(at("w.safetensors"), names, fresh.p, 4, fresh.opt, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "is not a checkpoint"), "%s", parity_last_error());
  model_free(&fresh);
  model_free(&run);
  model_free(&ref);
}

Test(checkpoint, state_lists_pytorch_names) {
  parity_device_t *dev = pt_device("cpu");
  model m = model_new(dev, 1, ADAM), s = model_new(dev, 1, SGD);
  cr_assert_eq(parity_optimizer_state_count(m.opt), 2 + 2 * 4);
  cr_assert_eq(parity_optimizer_state_count(s.opt), 2 + 4);
  parity_optimizer_state_t st;
  OK(parity_optimizer_state(m.opt, 0, &st));
  cr_assert_str_eq(st.name, "step");
  cr_assert_eq(st.param, -1);
  OK(parity_optimizer_state(m.opt, 5, &st));
  cr_assert_str_eq(st.name, "exp_avg_sq");
  cr_assert_eq(st.param, 1);
  cr_assert_eq(parity_tensor_numel(st.tensor), HID);
  OK(parity_optimizer_state(s.opt, 3, &st));
  cr_assert_str_eq(st.name, "momentum_buffer");
  cr_assert_eq(parity_optimizer_state(s.opt, 6, &st), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert_eq(parity_optimizer_state_count(NULL), 0);
  model_free(&s);
  model_free(&m);
}

static void snapshot(const model *m, float out[4][HID * IN]) {
  for (int i = 0; i < 4; i++)
    OK(parity_tensor_to_host(m->p[i], out[i], (uint64_t)parity_tensor_numel(m->p[i]) * sizeof(float)));
}
static void expect_unchanged(const model *m, float before[4][HID * IN], const char *what) {
  float now[4][HID * IN];
  snapshot(m, now);
  for (int i = 0; i < 4; i++)
    cr_assert_eq(memcmp(before[i], now[i], (size_t)parity_tensor_numel(m->p[i]) * sizeof(float)), 0, "%s changed %s",
                 what, names[i]);
}

Test(checkpoint, foreign_and_cut_checkpoints_are_refused_and_change_nothing) {
  parity_device_t *dev = pt_device("cpu");
  model a = model_new(dev, 1, ADAM), other = model_new(dev, 2, ADAMW), sgd = model_new(dev, 3, SGD);
  train_step(dev, &a, 0);
  OK(parity_checkpoint_save(at("a.safetensors"), names, a.p, 4, a.opt, NULL, NULL, 0));
  static float before[4][HID * IN];
  snapshot(&other, before);
  cr_assert_eq(parity_checkpoint_load(at("a.safetensors"), names, other.p, 4, other.opt, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "holds the state of the optimizer \"adam beta1=0.9"), "%s",
            parity_last_error());
  cr_assert_eq(parity_checkpoint_load(at("a.safetensors"), names, sgd.p, 4, sgd.opt, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_checkpoint_load(at("a.safetensors"), names, other.p, 4, NULL, 0), PARITY_STATUS_INVALID_ARGUMENT);
  expect_unchanged(&other, before, "a foreign checkpoint");
  /* the file cut at every length of its header and at sampled lengths of its data */
  FILE *fp = fopen(at("a.safetensors"), "rb");
  cr_assert_not_null(fp);
  static unsigned char bytes[1 << 16];
  size_t size = fread(bytes, 1, sizeof bytes, fp);
  fclose(fp);
  uint64_t header = 0;
  for (int i = 0; i < 8; i++) header |= (uint64_t)bytes[i] << (8 * i);
  model b = model_new(dev, 5, ADAM);
  snapshot(&b, before);
  int tried = 0;
  for (size_t len = 0; len < size; len += len < 8 + header ? 1 : 97) {
    fp = fopen(at("cut.safetensors"), "wb");
    cr_assert_eq(fwrite(bytes, 1, len, fp), len);
    fclose(fp);
    cr_assert_eq(parity_checkpoint_load(at("cut.safetensors"), names, b.p, 4, b.opt, 0), PARITY_STATUS_INVALID_ARGUMENT,
                 "a checkpoint cut to %zu of %zu bytes loaded", len, size);
    tried++;
  }
  cr_assert_gt(tried, (int)header);
  expect_unchanged(&b, before, "a cut checkpoint");
  OK(parity_checkpoint_load(at("a.safetensors"), names, b.p, 4, b.opt, 0));
  model_free(&b);
  model_free(&sgd);
  model_free(&other);
  model_free(&a);
}
