/* cases_nn.c — shape variants of the reduce, matmul, conv2d, pooling and softmax kinds. Sizes
 * straddle common work-group sizes (31/32/33, 255/256/257, 1023/1024/1025); empty tensors,
 * strided, transposed and broadcast views and special values each have a variant. */
#include <string.h>

#include "conform.h"

enum { W_DEFAULT = 1, W_FULL = 2 };
enum { FWD = 1, BWD = 2, BOTH = 3 };
#define C CF_LAYOUT_CONTIG
#define T CF_LAYOUT_TRANSPOSED
#define R CF_LAYOUT_REVERSED

static cf_case_t *start(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags, int32_t dtype, int32_t dir,
                        uint32_t when, int32_t values) {
  cf_case_t *c = cf_case_push(list);
  if (!c) return NULL;
  c->op = op;
  c->kind = kind;
  c->op_flags = flags;
  c->dtype = dtype;
  c->out_dtype = dtype;
  c->direction = dir;
  c->values = values;
  c->dy_values = CF_VALUES_NORMAL;
  c->full_only = !(when & W_DEFAULT);
  return c;
}

static void set(cf_spec_t *s, int32_t dtype, uint32_t rank, const int64_t *shape, int32_t layout, uint32_t bcast) {
  *s = cf_spec_make(dtype, rank, shape);
  s->layout = layout;
  s->bcast = bcast;
}

static int directions(uint32_t dirs, uint32_t flags, int32_t dtype, int32_t dir) {
  if (!(dirs & (1u << dir))) return 0;
  return dir == PARITY_DIRECTION_FORWARD || ((flags & PARITY_OPF_BACKWARD) && psup_dtype_is_float(dtype));
}

/* ---- reduce ------------------------------------------------------------------------------ */
typedef struct reduce_variant_t {
  const char *name;
  uint32_t when, dirs;
  int32_t values;
  uint32_t rank;
  int64_t shape[4];
  uint32_t axes;
  int32_t layout;
  uint32_t bcast;
} reduce_variant_t;

static const reduce_variant_t reduce_variants[] = {
    {"all", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {7, 9}, 3u, C, 0},
    {"last33", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {5, 33}, 2u, C, 0},
    {"first", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {33, 6}, 1u, C, 0},
    {"mid", W_FULL, BOTH, CF_VALUES_NORMAL, 3, {4, 31, 5}, 2u, C, 0},
    {"multi", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 4, {3, 4, 5, 6}, 5u, C, 0},
    {"r31", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 31}, 2u, C, 0},
    {"r32", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 32}, 2u, C, 0},
    {"r255", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 255}, 2u, C, 0},
    {"r256", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 256}, 2u, C, 0},
    {"r257", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 257}, 2u, C, 0},
    {"r1023", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 1023}, 2u, C, 0},
    {"r1024", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {3, 1024}, 2u, C, 0},
    {"r1025", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {3, 1025}, 2u, C, 0},
    {"keep-empty", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {0, 5}, 2u, C, 0},
    {"empty-axis", W_DEFAULT, FWD, CF_VALUES_NORMAL, 2, {4, 0}, 2u, C, 0},
    {"view", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {6, 10}, 1u, T, 0},
    /* x reversed along the reduced axis; dx is not (gradients are never reversed) */
    {"reversed", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, {5, 12}, 2u, R, 0},
    {"bcast", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {8, 16}, 2u, C, 2u},
    {"special", W_DEFAULT, FWD, CF_VALUES_SPECIAL, 2, {4, 26}, 2u, C, 0},
    {"ties", W_DEFAULT, BOTH, CF_VALUES_TIES, 2, {6, 8}, 2u, C, 0},
    {"none", W_FULL, BOTH, CF_VALUES_NORMAL, 2, {5, 4}, 0u, C, 0},
    {"scalar", W_FULL, BOTH, CF_VALUES_NORMAL, 0, {0}, 0u, C, 0},
    {"large", W_FULL, FWD, CF_VALUES_POSITIVE, 1, {1 << 24}, 1u, C, 0},
    {"large-mixed", W_FULL, FWD, CF_VALUES_NORMAL, 1, {1 << 24}, 1u, C, 0},
    {"spikes", W_DEFAULT, FWD, CF_VALUES_SPIKES, 1, {(1 << 18) + 7}, 1u, C, 0},
    /* past 2^31 logical elements (3 rows of 2^30 + 3, each row one broadcast value): 32-bit
     * element indexing overflows, memory does not */
    {"huge-bcast", W_FULL, FWD, CF_VALUES_POSITIVE, 2, {3, (1 << 30) + 3}, 2u, C, 2u},
    {"pos4099", W_DEFAULT, BOTH, CF_VALUES_POSITIVE, 2, {3, 4099}, 2u, C, 0},
    {"neg-zero", W_DEFAULT, FWD, CF_VALUES_NEGZERO, 2, {3, 37}, 2u, C, 0},
    {"fd", W_DEFAULT, BWD, CF_VALUES_NORMAL, 2, {3, 7}, 2u, C, 0},
    /* max, min, argmax, argmin: tied extremes (and NaNs) a third of a row apart, 3*4096+5 terms per
     * row: past the GPU plugins' split (4096 terms), so the ties fall in different partials */
    {"ties-split", W_DEFAULT, BOTH, CF_VALUES_SPLIT_TIES, 2, {4, 3 * 4096 + 5}, 2u, C, 0},
    /* max, min, argmax, argmin in floating dtypes: NaN in the reduced slice, beside ties and
     * infinities, and a row of NaN; backward routes the gradient to the NaN elements; rows whose
     * extreme is a zero of either sign (-0 < +0) */
    {"nan", W_DEFAULT, BOTH, CF_VALUES_NAN, 2, {8, 37}, 2u, C, 0},
    /* the same rows, 129 long: a NaN last (row 3, after the tied maxima) is the last term of the
     * second 64-term block after the first term, a block whose other terms cannot beat the best
     * so far (OpenCL's CPU layout filters such blocks by fmax/fmin, which ignore NaN) */
    {"nan-r129", W_DEFAULT, BOTH, CF_VALUES_NAN, 2, {8, 129}, 2u, C, 0},
};

/* sum of bool counted into i64 over 2^31 + 7 stored bytes (--full): 32-bit element indices and
 * byte offsets overflow. A device whose max_buffer_bytes is smaller refuses it (unsupported). */
static const reduce_variant_t huge_bool = {"huge", W_FULL, FWD, CF_VALUES_NORMAL, 1, {(1ll << 31) + 7}, 1u, C, 0};

static int push_reduce(cf_case_list_t *list, int32_t op, uint32_t flags, int32_t dt, int32_t dir,
                       const reduce_variant_t *v, uint32_t when) {
  cf_case_t *c = start(list, op, PARITY_OP_KIND_REDUCE, flags, dt, dir, when, v->values);
  if (!c) return -1;
  int is_arg = op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN;
  c->out_dtype = is_arg ? PARITY_DTYPE_I64 : dt;
  c->nin = c->nout = 1;
  c->has_in[0] = 1;
  set(&c->in[0], dt, v->rank, v->shape, v->layout, v->bcast);
  int64_t yshape[PARITY_MAX_RANK];
  int empty_axis = 0;
  for (uint32_t a = 0; a < v->rank; a++) {
    int reduced = (v->axes >> a) & 1u;
    yshape[a] = reduced ? 1 : v->shape[a];
    if (reduced && v->shape[a] == 0) empty_axis = 1;
  }
  set(&c->out[0], c->out_dtype, v->rank, yshape, C, 0);
  c->params.reduce.axes_mask = v->axes;
  c->expect_error = empty_axis && op != PARITY_OP_SUM && op != PARITY_OP_MEAN;
  if (!strcmp(v->name, "fd")) c->mode = CF_MODE_FD;
  cf_case_name(c, v->name);
  return 0;
}

int cf_cases_reduce(cf_case_list_t *list, int32_t op, uint32_t flags) {
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++) {
    if (!cf_dtype_applies(PARITY_OP_KIND_REDUCE, flags, dt)) continue;
    for (size_t i = 0; i < sizeof reduce_variants / sizeof reduce_variants[0]; i++) {
      const reduce_variant_t *v = &reduce_variants[i];
      uint32_t when = v->when;
      if (!strcmp(v->name, "fd") && dt != PARITY_DTYPE_F64) continue;
      int sum_or_mean = op == PARITY_OP_SUM || op == PARITY_OP_MEAN;
      if (!strncmp(v->name, "large", 5)) {
        if (dt != PARITY_DTYPE_F32 || !(sum_or_mean || op == PARITY_OP_MAX)) continue;
        if (op == PARITY_OP_SUM && !strcmp(v->name, "large"))
          when = W_DEFAULT; /* the one 2^24 case of the quick subset */
      }
      /* values that only sums can be judged on: spikes and all-positive data make a dropped partial
       * or a stagnating sequential sum exceed the bound; -0 everywhere must sum to -0 */
      if ((!strcmp(v->name, "spikes") || !strcmp(v->name, "huge-bcast")) && (!sum_or_mean || dt != PARITY_DTYPE_F32))
        continue;
      if ((!strcmp(v->name, "pos4099") || !strcmp(v->name, "neg-zero")) && (!sum_or_mean || !psup_dtype_is_float(dt)))
        continue;
      /* extremes and their indices: what ties and NaN decide */
      int nan_rows = !strncmp(v->name, "nan", 3);
      if ((!strcmp(v->name, "ties-split") || nan_rows) && sum_or_mean) continue;
      if (nan_rows && !psup_dtype_is_float(dt)) continue;
      for (int32_t dir = 0; dir < 2; dir++)
        if (directions(v->dirs, flags, dt, dir) && push_reduce(list, op, flags, dt, dir, v, when) != 0) return -1;
    }
  }
  if (op == PARITY_OP_SUM) {
    if (push_reduce(list, op, flags, PARITY_DTYPE_BOOL, PARITY_DIRECTION_FORWARD, &huge_bool, huge_bool.when) != 0)
      return -1;
    cf_case_t *c = &list->items[list->count - 1];
    c->out_dtype = c->out[0].dtype = PARITY_DTYPE_I64; /* count, not any */
  }
  return 0;
}

/* ---- matmul ------------------------------------------------------------------------------ */
typedef struct matmul_variant_t {
  const char *name;
  uint32_t when, dirs;
  int32_t values;
  int64_t m, k, n;
  uint32_t batch_rank;
  int64_t batch[2];
  int32_t layout_a, layout_b;
  int bcast_b; /* b broadcast over the batch axes */
} matmul_variant_t;

static const matmul_variant_t matmul_variants[] = {
    {"1x1x1", W_FULL, BOTH, CF_VALUES_NORMAL, 1, 1, 1, 0, {0}, C, C, 0},
    {"3x5x7", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 3, 5, 7, 0, {0}, C, C, 0},
    {"k0", W_DEFAULT, FWD, CF_VALUES_NORMAL, 3, 0, 4, 0, {0}, C, C, 0},
    {"m0", W_FULL, BOTH, CF_VALUES_NORMAL, 0, 5, 4, 0, {0}, C, C, 0},
    {"33x31x17", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 33, 31, 17, 0, {0}, C, C, 0},
    {"64x64x64", W_FULL, BOTH, CF_VALUES_NORMAL, 64, 64, 64, 0, {0}, C, C, 0},
    {"127x129x65", W_FULL, BOTH, CF_VALUES_NORMAL, 127, 129, 65, 0, {0}, C, C, 0},
    {"255x257x33", W_FULL, BOTH, CF_VALUES_NORMAL, 255, 257, 33, 0, {0}, C, C, 0},
    {"9x1025x7", W_FULL, BOTH, CF_VALUES_NORMAL, 9, 1025, 7, 0, {0}, C, C, 0},
    {"k4097-pos", W_DEFAULT, BOTH, CF_VALUES_POSITIVE, 3, 4097, 5, 0, {0}, C, C, 0},
    {"k4097-mixed", W_FULL, BOTH, CF_VALUES_NORMAL, 3, 4097, 5, 0, {0}, C, T, 0},
    {"batch", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 4, 6, 5, 2, {2, 3}, C, C, 0},
    {"bcast-b", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 4, 6, 5, 1, {3}, C, C, 1},
    {"b-transposed", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 7, 9, 5, 0, {0}, C, T, 0},
    /* x w^T as a Linear layer runs it: whole column blocks and a partial one (OpenCL's 8 columns,
     * the CPU plugin's panels of 16 or 32), k past the vector steps (8) and block sums (64) */
    {"b-transposed-wide", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 6, 70, 41, 0, {0}, C, T, 0},
    {"a-transposed", W_FULL, BOTH, CF_VALUES_NORMAL, 7, 9, 5, 0, {0}, T, C, 0},
    {"a-reversed", W_FULL, BOTH, CF_VALUES_NORMAL, 6, 8, 3, 1, {2}, R, C, 0},
    {"special", W_DEFAULT, FWD, CF_VALUES_SPECIAL, 4, 6, 5, 0, {0}, C, C, 0},
    {"ties", W_FULL, BOTH, CF_VALUES_TIES, 5, 8, 3, 0, {0}, C, C, 0},
    {"fd", W_DEFAULT, BWD, CF_VALUES_NORMAL, 4, 5, 3, 0, {0}, C, C, 0},
};

static int push_matmul(cf_case_list_t *list, int32_t op, uint32_t flags, int32_t dt, int32_t dir,
                       const matmul_variant_t *v) {
  cf_case_t *c = start(list, op, PARITY_OP_KIND_MATMUL, flags, dt, dir, v->when, v->values);
  if (!c) return -1;
  uint32_t r = v->batch_rank + 2;
  int64_t a[PARITY_MAX_RANK], b[PARITY_MAX_RANK], y[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < v->batch_rank; i++) a[i] = b[i] = y[i] = v->batch[i];
  a[r - 2] = v->m, a[r - 1] = v->k;
  b[r - 2] = v->k, b[r - 1] = v->n;
  y[r - 2] = v->m, y[r - 1] = v->n;
  c->nin = 2;
  c->nout = 1;
  c->has_in[0] = c->has_in[1] = 1;
  set(&c->in[0], dt, r, a, v->layout_a, 0);
  set(&c->in[1], dt, r, b, v->layout_b, v->bcast_b ? (1u << v->batch_rank) - 1u : 0);
  set(&c->out[0], dt, r, y, C, 0);
  if (!strcmp(v->name, "fd")) c->mode = CF_MODE_FD;
  cf_case_name(c, v->name);
  return 0;
}

/* ---- conv2d and pooling ------------------------------------------------------------------- */
typedef struct conv_variant_t {
  const char *name;
  uint32_t when, dirs;
  int32_t values;
  int64_t n, c, h, w, o, kh, kw;
  int32_t stride, pad[4], dil, groups, bias, count_include_pad;
  int32_t layout_x;
  int pool_only;           /* 1: pooling only, 2: avg_pool2d only, 0: conv2d only */
  int32_t dy_layout;       /* backward: dy's layout (y is contiguous) */
  int32_t stride_w, dil_w; /* along W where not 0 (else stride, dil) */
} conv_variant_t;

// clang-format off
static const conv_variant_t conv_variants[] = {
    {"3x3p1", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, 3, 8, 9, 4, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"s2-asym", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 9, 10, 3, 3, 3, 2, {1, 0, 2, 1}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"g2-nobias", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, 4, 7, 7, 6, 3, 3, 1, {1, 1, 1, 1}, 1, 2, 0, 1, C, 0, C, 0, 0},
    {"dil2", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 3, 11, 11, 2, 3, 3, 1, {2, 2, 2, 2}, 2, 1, 1, 1, C, 0, C, 0, 0},
    {"1x1", W_FULL, BOTH, CF_VALUES_NORMAL, 2, 5, 6, 6, 7, 1, 1, 1, {0, 0, 0, 0}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"depthwise", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 4, 8, 8, 4, 3, 3, 1, {1, 1, 1, 1}, 1, 4, 1, 1, C, 0, C, 0, 0},
    {"5x3-s3", W_FULL, BOTH, CF_VALUES_NORMAL, 2, 3, 13, 11, 2, 5, 3, 3, {2, 1, 1, 0}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"big", W_FULL, BOTH, CF_VALUES_NORMAL, 2, 16, 33, 33, 16, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"k4609-pos", W_DEFAULT, BOTH, CF_VALUES_POSITIVE, 1, 512, 4, 5, 3, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, C,           0,         0},
    {"view", W_FULL, BOTH, CF_VALUES_NORMAL, 1, 2, 6, 7, 3, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, T, 0, C, 0, 0},
    {"special", W_DEFAULT, FWD, CF_VALUES_SPECIAL, 1, 2, 6, 6, 2, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, C, 0, 0},
    /* H and W told apart: kernel 3x2, stride 1x2, dilation 2x1, asymmetric padding; x reversed
     * along W (dx is not: gradients are never reversed) */
    {"rect", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 8, 9, 3, 3, 2, 1, {2, 1, 0, 1}, 2, 1, 1, 1, R, 0, C, 2, 1},
    {"k2s2", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 2, 3, 8, 8, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
    {"k3s1p1", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 7, 9, 0, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 0, 1, C, 1, C, 0, 0},
    {"k3s1p1-cip0", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 7, 9, 0, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 0, 0, C, 2, C, 0, 0},
    {"ties", W_DEFAULT, BOTH, CF_VALUES_TIES, 2, 2, 6, 6, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
    {"ties-overlap", W_FULL, BOTH, CF_VALUES_TIES, 1, 2, 7, 7, 0, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 0, 1, C, 1, C, 0, 0},
    {"k3s2", W_FULL, BOTH, CF_VALUES_NORMAL, 2, 2, 11, 11, 0, 3, 3, 2, {1, 1, 1, 1}, 1, 1, 0, 1, C, 1, C, 0, 0},
    {"pool-special", W_DEFAULT, BOTH, CF_VALUES_SPECIAL, 1, 2, 8, 8, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
    /* one-element windows of special values: -inf (and NaN) must come out of max pooling as such */
    {"k1-special", W_DEFAULT, FWD, CF_VALUES_SPECIAL, 1, 2, 5, 8, 0, 1, 1, 1, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
    /* pooling with H and W told apart: kernel 3x2, stride 2x1, dilation 2x1, padding top 1 and
     * right 1; x reversed along W (dx is not) */
    {"rect", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 9, 7, 0, 3, 2, 2, {1, 0, 0, 1}, 2, 1, 0, 1, R, 1, C, 1, 1},
    /* pooling with dilation: windows (and backward's tie counts) over rows and columns 2 apart */
    {"dil2", W_DEFAULT, BOTH, CF_VALUES_NORMAL, 1, 2, 11, 11, 0, 3, 3, 1, {1, 1, 1, 1}, 2, 1, 0, 1, C, 1, C, 0, 0},
    /* windows of -inf only: their max is -inf (a max started from the lowest finite value is not) */
    {"neg-inf", W_DEFAULT, FWD, CF_VALUES_NEGINF, 1, 2, 8, 8, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
    /* dy transposed: its strides are not y's (a kernel reading dy with y's geometry, or as rows of
     * unit stride, shows); conv2d: 8 output columns (a whole vector of OpenCL's CPU blocks in f32) */
    {"grad-transposed", W_DEFAULT, BWD, CF_VALUES_NORMAL, 1, 2, 6, 9, 3, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, T, 0, 0},
    {"grad-transposed", W_DEFAULT, BWD, CF_VALUES_NORMAL, 2, 3, 8, 8, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, T, 0, 0},
    {"fd", W_DEFAULT, BWD, CF_VALUES_NORMAL, 1, 2, 5, 5, 3, 3, 3, 1, {1, 1, 1, 1}, 1, 1, 1, 1, C, 0, C, 0, 0},
    {"fd", W_DEFAULT, BWD, CF_VALUES_NORMAL, 1, 2, 6, 6, 0, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 0, 1, C, 1, C, 0, 0},
};
// clang-format on

static int push_conv(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags, int32_t dt, int32_t dir,
                     const conv_variant_t *v) {
  cf_case_t *c = start(list, op, kind, flags, dt, dir, v->when, v->values);
  if (!c) return -1;
  parity_conv2d_params_t *p = &c->params.conv2d;
  int32_t sw = v->stride_w ? v->stride_w : v->stride, dw = v->dil_w ? v->dil_w : v->dil;
  p->stride[0] = v->stride;
  p->stride[1] = sw;
  memcpy(p->padding, v->pad, sizeof p->padding);
  p->dilation[0] = v->dil;
  p->dilation[1] = dw;
  p->groups = v->groups;
  p->kernel[0] = (int32_t)v->kh;
  p->kernel[1] = (int32_t)v->kw;
  p->count_include_pad = v->count_include_pad;
  int64_t oh = (v->h + v->pad[0] + v->pad[1] - v->dil * (v->kh - 1) - 1) / v->stride + 1;
  int64_t ow = (v->w + v->pad[2] + v->pad[3] - dw * (v->kw - 1) - 1) / sw + 1;
  int64_t x[4] = {v->n, v->c, v->h, v->w};
  set(&c->in[0], dt, 4, x, v->layout_x, 0);
  c->has_in[0] = 1;
  c->nout = 1;
  if (kind == PARITY_OP_KIND_CONV2D) {
    int64_t w[4] = {v->o, v->c / v->groups, v->kh, v->kw}, b[1] = {v->o}, y[4] = {v->n, v->o, oh, ow};
    c->nin = 3;
    set(&c->in[1], dt, 4, w, C, 0);
    set(&c->in[2], dt, 1, b, C, 0);
    c->has_in[1] = 1;
    c->has_in[2] = v->bias;
    set(&c->out[0], dt, 4, y, C, 0);
  } else {
    int64_t y[4] = {v->n, v->c, oh, ow};
    c->nin = 1;
    set(&c->out[0], dt, 4, y, C, 0);
  }
  c->dy_layout = v->dy_layout;
  if (!strcmp(v->name, "fd")) c->mode = CF_MODE_FD;
  cf_case_name(c, v->name);
  return 0;
}

/* ---- softmax ------------------------------------------------------------------------------ */
typedef struct softmax_variant_t {
  const char *name;
  uint32_t when, dirs;
  int32_t values, dy_values;
  uint32_t rank;
  int64_t shape[3];
  int32_t axis, layout;
  int32_t dy_layout; /* backward: dy's layout (y is contiguous) */
} softmax_variant_t;

static const softmax_variant_t softmax_variants[] = {
    {"row33", W_DEFAULT, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {4, 33}, 1, C, C},
    {"row1025", W_DEFAULT, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 1025}, 1, C, C},
    {"axis0", W_DEFAULT, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {17, 5}, 0, C, C},
    /* rows 1000 above and below 0 in turn: a row max started at 0, not -inf, underflows the rows below to 0 / 0 */
    {"offset1000", W_DEFAULT, BOTH, CF_VALUES_OFFSET1000, CF_VALUES_NORMAL, 2, {4, 40}, 1, C, C},
    {"offset1e8", W_FULL, FWD, CF_VALUES_OFFSET1E8, CF_VALUES_NORMAL, 2, {4, 40}, 1, C, C},
    {"nll", W_DEFAULT, BWD, CF_VALUES_WIDE, CF_VALUES_ONEHOT, 2, {8, 50}, 1, C, C},
    {"sum-grad", W_DEFAULT, BWD, CF_VALUES_NORMAL, CF_VALUES_ONES, 2, {6, 50}, 1, C, C},
    {"special", W_DEFAULT, FWD, CF_VALUES_SPECIAL, CF_VALUES_NORMAL, 2, {8, 24}, 1, C, C},
    {"far", W_DEFAULT, BOTH, CF_VALUES_FAR, CF_VALUES_NORMAL, 2, {10, 37}, 1, C, C},
    {"nan-inf", W_DEFAULT, BOTH, CF_VALUES_NANINF, CF_VALUES_NORMAL, 2, {8, 37}, 1, C, C},
    {"row31", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 31}, 1, C, C},
    {"row32", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 32}, 1, C, C},
    {"row255", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 255}, 1, C, C},
    {"row256", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 256}, 1, C, C},
    {"row257", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 257}, 1, C, C},
    {"row1023", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 1023}, 1, C, C},
    {"row1024", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 1024}, 1, C, C},
    {"rank3", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 3, {2, 5, 7}, 1, C, C},
    {"view", W_DEFAULT, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {9, 12}, 1, T, C}, /* x's stride is not y's */
    /* dy transposed: its stride along the row is not y's */
    {"grad-transposed", W_DEFAULT, BWD, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {6, 9}, 1, C, T},
    {"empty", W_FULL, BOTH, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {0, 5}, 1, C, C},
    {"large", W_FULL, FWD, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {16, 1 << 20}, 1, C, C},
    {"fd", W_DEFAULT, BWD, CF_VALUES_NORMAL, CF_VALUES_NORMAL, 2, {3, 9}, 1, C, C},
};

static int push_softmax(cf_case_list_t *list, int32_t op, uint32_t flags, int32_t dt, int32_t dir,
                        const softmax_variant_t *v) {
  cf_case_t *c = start(list, op, PARITY_OP_KIND_SOFTMAX, flags, dt, dir, v->when, v->values);
  if (!c) return -1;
  c->dy_values = v->dy_values;
  c->nin = c->nout = 1;
  c->has_in[0] = 1;
  set(&c->in[0], dt, v->rank, v->shape, v->layout, 0);
  set(&c->out[0], dt, v->rank, v->shape, C, 0);
  c->params.softmax.axis = v->axis;
  c->dy_layout = v->dy_layout;
  if (!strcmp(v->name, "fd")) c->mode = CF_MODE_FD;
  cf_case_name(c, v->name);
  return 0;
}

int cf_cases_nn(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags) {
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++) {
    if (!cf_dtype_applies(kind, flags, dt)) continue;
    for (int32_t dir = 0; dir < 2; dir++) {
      int rc = 0;
      if (kind == PARITY_OP_KIND_MATMUL) {
        for (size_t i = 0; rc == 0 && i < sizeof matmul_variants / sizeof matmul_variants[0]; i++) {
          const matmul_variant_t *v = &matmul_variants[i];
          if (!strcmp(v->name, "fd") && dt != PARITY_DTYPE_F64) continue;
          if (directions(v->dirs, flags, dt, dir)) rc = push_matmul(list, op, flags, dt, dir, v);
        }
      } else if (kind == PARITY_OP_KIND_CONV2D || kind == PARITY_OP_KIND_POOL2D) {
        for (size_t i = 0; rc == 0 && i < sizeof conv_variants / sizeof conv_variants[0]; i++) {
          const conv_variant_t *v = &conv_variants[i];
          int pool = kind == PARITY_OP_KIND_POOL2D;
          if (pool != (v->pool_only != 0)) continue;
          if (v->pool_only == 2 && op != PARITY_OP_AVG_POOL2D) continue;
          if (!strcmp(v->name, "fd") && dt != PARITY_DTYPE_F64) continue;
          if (directions(v->dirs, flags, dt, dir)) rc = push_conv(list, op, kind, flags, dt, dir, v);
        }
      } else {
        for (size_t i = 0; rc == 0 && i < sizeof softmax_variants / sizeof softmax_variants[0]; i++) {
          const softmax_variant_t *v = &softmax_variants[i];
          if (!strcmp(v->name, "fd") && dt != PARITY_DTYPE_F64) continue;
          if (!strcmp(v->name, "offset1e8") && dt == PARITY_DTYPE_F16) continue; /* beyond f16's range */
          if (!strcmp(v->name, "large") && dt != PARITY_DTYPE_F32) continue;
          if (directions(v->dirs, flags, dt, dir)) rc = push_softmax(list, op, flags, dt, dir, v);
        }
      }
      if (rc != 0) return -1;
    }
  }
  return 0;
}
