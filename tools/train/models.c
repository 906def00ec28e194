/* models.c — MLP 784-256-10 and a two-conv CNN, as listed in docs/training.md. */
#define _POSIX_C_SOURCE 200809L
#include "models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "parity/safetensors.h"

const char *model_kind_name(model_kind k) { return k == MODEL_MLP ? "mlp" : "cnn"; }

typedef struct pspec {
  const char *name;
  uint32_t rank;
  int64_t shape[4];
  double gain; /* 0: zeros (biases) */
} pspec;

static const pspec mlp_spec[] = {
    {"fc1.weight", 2, {256, 784}, 2},
    {"fc1.bias", 1, {256}, 0},
    {"fc2.weight", 2, {10, 256}, 1},
    {"fc2.bias", 1, {10}, 0},
};
static const pspec cnn_spec[] = {
    {"conv1.weight", 4, {16, 1, 5, 5}, 2},  {"conv1.bias", 1, {16}, 0},
    {"conv2.weight", 4, {32, 16, 5, 5}, 2}, {"conv2.bias", 1, {32}, 0},
    {"fc1.weight", 2, {128, 1568}, 2},      {"fc1.bias", 1, {128}, 0},
    {"fc2.weight", 2, {10, 128}, 1},        {"fc2.bias", 1, {10}, 0},
};

void model_init(model *m, model_kind kind, parity_device_t *dev, parity_dtype_t dtype, uint64_t seed) {
  memset(m, 0, sizeof *m);
  m->kind = kind;
  m->dtype = dtype;
  const pspec *s = kind == MODEL_MLP ? mlp_spec : cnn_spec;
  m->count = kind == MODEL_MLP ? 4 : 8;
  for (uint32_t i = 0; i < m->count; i++) {
    m->name[i] = s[i].name;
    m->rank[i] = s[i].rank;
    memcpy(m->shape[i], s[i].shape, sizeof s[i].shape);
    if (s[i].gain == 0) {
      CHECK(parity_tensor_zeros(dev, dtype, s[i].rank, s[i].shape, &m->param[i]));
    } else {
      int64_t fan_in = 1;
      for (uint32_t d = 1; d < s[i].rank; d++) fan_in *= s[i].shape[d];
      CHECK(parity_tensor_rand_normal(dev, dtype, s[i].rank, s[i].shape, 0, sqrt(s[i].gain / (double)fan_in), seed,
                                      (uint64_t)(i + 1) << 32, &m->param[i]));
    }
    CHECK(parity_tensor_set_requires_grad(m->param[i], 1));
  }
}

void model_release(model *m) {
  for (uint32_t i = 0; i < m->count; i++) parity_tensor_release(m->param[i]);
  memset(m, 0, sizeof *m);
}

#define TRY(expr)                                                   \
  do {                                                              \
    parity_status_t st_ = (expr);                                   \
    if (st_ != PARITY_STATUS_OK) {                                  \
      for (int k_ = 0; k_ < nt; k_++) parity_tensor_release(t[k_]); \
      return st_;                                                   \
    }                                                               \
    nt++;                                                           \
  } while (0)

parity_status_t model_forward(const model *m, parity_tensor_t *x, parity_tensor_t **logits) {
  parity_tensor_t *t[12] = {0};
  int nt = 0;
  int64_t n = parity_tensor_dim(x, 0);
  parity_tensor_t *const *p = m->param;
  *logits = NULL;
  if (m->kind == MODEL_MLP) {
    TRY(parity_reshape(x, 2, (int64_t[]){n, 784}, &t[nt]));
    TRY(parity_linear(t[0], p[0], p[1], &t[nt]));
    TRY(parity_unary(PARITY_OP_RELU, t[1], &t[nt]));
    TRY(parity_linear(t[2], p[2], p[3], logits));
  } else {
    parity_conv2d_options_t conv = {.stride = {1, 1}, .padding = {2, 2, 2, 2}, .dilation = {1, 1}, .groups = 1};
    parity_pool2d_options_t pool = {.kernel = {2, 2}, .stride = {2, 2}, .dilation = {1, 1}};
    TRY(parity_conv2d(x, p[0], p[1], &conv, &t[nt])); /* [n,16,28,28] */
    TRY(parity_unary(PARITY_OP_RELU, t[0], &t[nt]));
    TRY(parity_pool2d(PARITY_OP_MAX_POOL2D, t[1], &pool, &t[nt])); /* [n,16,14,14] */
    TRY(parity_conv2d(t[2], p[2], p[3], &conv, &t[nt]));           /* [n,32,14,14] */
    TRY(parity_unary(PARITY_OP_RELU, t[3], &t[nt]));
    TRY(parity_pool2d(PARITY_OP_MAX_POOL2D, t[4], &pool, &t[nt])); /* [n,32,7,7] */
    TRY(parity_reshape(t[5], 2, (int64_t[]){n, 1568}, &t[nt]));
    TRY(parity_linear(t[6], p[4], p[5], &t[nt])); /* [n,128] */
    TRY(parity_unary(PARITY_OP_RELU, t[7], &t[nt]));
    TRY(parity_linear(t[8], p[6], p[7], logits)); /* [n,10] */
  }
  for (int k = 0; k < nt; k++) parity_tensor_release(t[k]);
  return PARITY_STATUS_OK;
}

parity_status_t model_grad(model *m, parity_tensor_t *x, parity_tensor_t *target, double grad_scale, double *loss) {
  parity_tensor_t *t[3] = {0};
  int nt = 0;
  for (uint32_t i = 0; i < m->count; i++) parity_tensor_zero_grad(m->param[i]);
  TRY(model_forward(m, x, &t[nt]));
  TRY(parity_cross_entropy(t[0], target, &t[nt]));
  TRY(parity_scalar_like(t[1], grad_scale, &t[nt]));
  parity_status_t st = parity_backward(t[1], t[2], 0);
  if (st == PARITY_STATUS_OK) st = parity_tensor_to_f64(t[1], loss, 1);
  for (int k = 0; k < nt; k++) parity_tensor_release(t[k]);
  return st;
}

int model_save(const model *m, const char *path, char *err, size_t errlen) {
  const char *keys[] = {"format", "parity.model"}, *vals[] = {"pt", model_kind_name(m->kind)};
  if (parity_save_safetensors(path, (const char *const *)m->name, m->param, m->count, keys, vals, 2) ==
      PARITY_STATUS_OK)
    return 0;
  snprintf(err, errlen, "%s", parity_last_error());
  return -1;
}

/* The tensors' names, dtypes and shapes against the model's (before the data is read). */
static int check_tensors(const model *m, const parity_st_file *f, const char *path, char *err, size_t errlen) {
  const char *dt = parity_st_dtype_name(m->dtype);
  const char *saved = parity_st_metadata(f, "parity.model"), *mine = model_kind_name(m->kind);
  if (saved && strcmp(saved, mine)) {
    snprintf(err, errlen, "%s: holds the weights of the %.40s model (metadata parity.model); this is the %s model",
             path, saved, mine);
    return -1;
  }
  if (f->count != m->count) {
    snprintf(err, errlen, "%s: holds %u tensors; the %s model has %u (", path, f->count, model_kind_name(m->kind),
             m->count);
    for (uint32_t i = 0; i < m->count; i++) {
      size_t l = strlen(err);
      snprintf(err + l, errlen - l, "%s%s", i ? ", " : "", m->name[i]);
    }
    size_t l = strlen(err);
    snprintf(err + l, errlen - l, ")");
    return -1;
  }
  int rc = 0;
  /* check everything before changing anything */
  for (uint32_t i = 0; i < m->count && !rc; i++) {
    const parity_st_tensor *t = parity_st_find(f, m->name[i]);
    if (!t) {
      snprintf(err, errlen, "%s: no tensor \"%s\" (the %s model's)", path, m->name[i], model_kind_name(m->kind));
      rc = -1;
    } else if (!dt || strcmp(t->dtype, dt)) {
      snprintf(err, errlen, "%s: tensor \"%s\" is %s; the model is %s (train and load with the same --dtype)", path,
               t->name, t->dtype, dt ? dt : "?");
      rc = -1;
    } else {
      int same = t->rank == m->rank[i];
      for (uint32_t d = 0; same && d < t->rank; d++) same = t->shape[d] == (uint64_t)m->shape[i][d];
      if (!same) {
        char got[96] = "", want[96] = "";
        for (uint32_t d = 0; d < t->rank; d++)
          snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "",
                   (unsigned long long)t->shape[d]);
        for (uint32_t d = 0; d < m->rank[i]; d++)
          snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "", (long long)m->shape[i][d]);
        snprintf(err, errlen, "%s: tensor \"%s\" has shape [%s]; the %s model needs [%s]", path, t->name, got,
                 model_kind_name(m->kind), want);
        rc = -1;
      }
    }
  }
  return rc;
}

int model_load(model *m, const char *path, int allow_nonfinite, char *note, size_t notelen, char *err, size_t errlen) {
  parity_st_file f;
  if (note && notelen) note[0] = 0;
  if (parity_st_open(path, &f, err, errlen)) return -1;
  /* the header first: a file of another model or shape is refused before its data is read */
  int rc = check_tensors(m, &f, path, err, errlen);
  if (!rc) rc = parity_st_load(&f, err, errlen);
  if (!rc && f.checksum_at < 0 && note)
    snprintf(note, notelen,
             "%s has no " PARITY_ST_CHECKSUM_KEY
             " (not written by parity-train): its integrity cannot be "
             "checked",
             path);
  for (uint32_t i = 0; i < m->count && !rc && !allow_nonfinite; i++) {
    const parity_st_tensor *t = parity_st_find(&f, m->name[i]);
    uint64_t first = 0, bad = parity_st_nonfinite(&f, t, &first);
    if (bad)
      rc = -1, snprintf(err, errlen,
                        "%s: tensor \"%s\" holds %llu NaN or infinite values (the first at element %llu); "
                        "--allow-nonfinite loads them anyway",
                        path, t->name, (unsigned long long)bad, (unsigned long long)first);
  }
  for (uint32_t i = 0; i < m->count && !rc; i++) {
    const parity_st_tensor *t = parity_st_find(&f, m->name[i]);
    if (parity_tensor_write(m->param[i], parity_st_data(&f, t), t->end - t->begin) != PARITY_STATUS_OK) {
      snprintf(err, errlen, "writing %s to the device: %s", m->name[i], parity_last_error());
      rc = -1;
    }
  }
  parity_st_free(&f);
  return rc;
}
