/* ocl_test.h — helpers for the OpenCL plugin's tests: the OpenCL device (tests skip cleanly when
 * there is none), strided views over backing buffers, and ot_check(), which runs one op on the
 * OpenCL device and on the CPU plugin in float64 (the oracle, fed the same inputs rounded to the
 * tested dtype) and holds the OpenCL result to the conformance rule of parity_support/tolerance.h:
 *  - exact ops (psup_op_is_exact, and every integer, bool or cast result): bit for bit;
 *  - rounded elementwise forward ops: within psup_ulp_bound ulps;
 *  - accumulating ops and every backward: psup_accum_bound(dtype, ref, S, k), S the same op on
 *    absolute values (at least |ref|).
 * Every case also runs twice on OpenCL and must give bitwise identical buffers, and output
 * positions outside the view must keep their sentinel (no stray writes). */
#ifndef PARITY_TESTS_OCL_TEST_H
#define PARITY_TESTS_OCL_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/tolerance.h"
#include "test_util.h"

#define OT_SENTINEL 1536.0 /* exact in every dtype but bool */

/* A context of our own (environment changes take effect), and its OpenCL plugin index. */
static inline parity_context_t *ot_fresh_context(uint32_t *out_plugin) {
  parity_context_t *ctx = pt_fresh_context();
  cr_assert_eq(parity_context_find_plugin(ctx, "opencl", out_plugin), PARITY_STATUS_OK, "%s", parity_last_error());
  return ctx;
}

/* 1 when the OpenCL plugin is built and reports at least one device; else why not in `why`. */
static inline int ot_have_opencl(char *why, size_t n) {
  parity_context_t *ctx = pt_fresh_context();
  uint32_t p;
  int have = 0;
  parity_plugin_record_t rec;
  if (parity_context_find_plugin(ctx, "opencl", &p) == PARITY_STATUS_OK &&
      parity_context_plugin(ctx, p, &rec) == PARITY_STATUS_OK)
    have = rec.state == PARITY_PLUGIN_STATE_LOADED && rec.device_count > 0;
  snprintf(why, n, "%s", parity_context_available(ctx));
  parity_context_destroy(ctx);
  return have;
}

/* The OpenCL device. Skips the test when this machine has no OpenCL device (or the plugin was
 * not built); fails it when a device exists but does not open. */
static inline parity_device_t *ot_device(void) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  parity_device_t *dev = pt_try_device("opencl");
  cr_assert_not_null(dev, "the OpenCL device exists but does not open: %s", parity_last_error());
  return dev;
}

/* ---- views ---------------------------------------------------------------------------------- */
typedef struct ot_view {
  int32_t dtype; /* PARITY_DTYPE_INVALID: operand absent (NULL) */
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[PARITY_MAX_RANK]; /* elements, may be 0 (broadcast) or negative */
  int64_t offset;                   /* elements */
} ot_view;

static inline ot_view ot_contig(int32_t dtype, uint32_t rank, const int64_t *shape) {
  ot_view v;
  memset(&v, 0, sizeof v);
  v.dtype = dtype;
  v.rank = rank;
  int64_t s = 1;
  for (int32_t i = (int32_t)rank - 1; i >= 0; i--) {
    v.shape[i] = shape[i];
    v.strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return v;
}

static inline ot_view ot_strided(int32_t dtype, uint32_t rank, const int64_t *shape, const int64_t *strides,
                                 int64_t offset) {
  ot_view v = ot_contig(dtype, rank, shape);
  for (uint32_t i = 0; i < rank; i++) v.strides[i] = strides[i];
  v.offset = offset;
  return v;
}

/* Elements of the backing buffer (>= 1); asserts negative strides stay above element 0. */
static inline int64_t ot_span(const ot_view *v) {
  int64_t lo = v->offset, hi = v->offset;
  for (uint32_t i = 0; i < v->rank; i++) {
    if (v->shape[i] == 0) return v->offset + 1;
    int64_t r = (v->shape[i] - 1) * v->strides[i];
    if (r < 0)
      lo += r;
    else
      hi += r;
  }
  cr_assert_geq(lo, 0, "view reaches below its buffer");
  return hi + 1;
}

static inline int64_t ot_numel(const ot_view *v) {
  int64_t n = 1;
  for (uint32_t i = 0; i < v->rank; i++) n *= v->shape[i];
  return n;
}

static inline double ot_rand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-53;
}

/* v rounded to what dtype stores */
static inline double ot_round(double v, int32_t dtype) {
  unsigned char b[8];
  psup_store_f64(b, dtype, v);
  return psup_load_f64(b, dtype);
}

/* A tensor on dev viewing a fresh buffer of `dtype` holding backing values vals (span of them). */
static inline pt_tensor ot_make(parity_device_t *dev, const ot_view *v, int32_t dtype, const double *vals) {
  int64_t span = ot_span(v);
  pt_tensor t = pt_tensor_new(dev, dtype, 1, &span, vals);
  t.desc.rank = v->rank;
  for (uint32_t i = 0; i < v->rank; i++) {
    t.desc.shape[i] = v->shape[i];
    t.desc.strides[i] = v->strides[i];
  }
  t.desc.offset_bytes = (uint64_t)v->offset * psup_dtype_size(dtype);
  return t;
}

/* ---- one case ------------------------------------------------------------------------------- */
typedef struct ot_case {
  const char *name;
  int32_t op, direction;
  parity_op_params_t params;
  uint32_t nin, nout;
  ot_view in[PARITY_MAX_INPUTS], out[PARITY_MAX_OUTPUTS];
  double lo, hi; /* random inputs in [lo, hi) (integers: whole numbers) */
  uint64_t seed;
  const double *specials; /* placed at the start of every floating input's backing buffer */
  int nspecials;
  const double *values[PARITY_MAX_INPUTS]; /* explicit backing values (NULL: random) */
  int64_t k;                               /* terms per output (accumulating ops); 0 for elementwise */
  int oracle_same_dtype;                   /* 1: the oracle runs in the tested dtypes (cast) */
  int whole;                               /* 1: random values are whole numbers (ties for max/min) */
  /* Optional: S for every element of output 0 (row-major), where "the op on absolute values"
   * is no bound (softmax backward subtracts); `in` are the inputs' rounded backing values. */
  void (*s_of)(const struct ot_case *c, double *const *in, double *s);
} ot_case;

/* The element at multi-index idx of a view over backing values. */
static inline double ot_at(const ot_view *v, const double *backing, const int64_t *idx) {
  int64_t off = v->offset;
  for (uint32_t a = 0; a < v->rank; a++) off += idx[a] * v->strides[a];
  return backing[off];
}

typedef struct ot_result {
  double max_ulp;   /* rounded elementwise ops */
  double max_ratio; /* |err| / bound for accumulating ops and backward */
  int64_t checked;
} ot_result;

static inline int ot_is_float(int32_t dt) { return psup_dtype_is_float(dt); }

static inline int ot_same_bits(double got, double want) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  return got == want && signbit(got) == signbit(want);
}

/* Run c on the OpenCL device and the f64 CPU oracle; assert the rule. */
static inline ot_result ot_check(parity_device_t *ocl, parity_device_t *cpu, const ot_case *c) {
  ot_result res = {0, 0, 0};
  uint64_t seed = c->seed ? c->seed : 0x5eedu;
  pt_tensor oi[PARITY_MAX_INPUTS], ci[PARITY_MAX_INPUTS], ai[PARITY_MAX_INPUTS];
  pt_tensor oo[PARITY_MAX_OUTPUTS], co[PARITY_MAX_OUTPUTS], ao[PARITY_MAX_OUTPUTS];
  const pt_tensor *pin_o[PARITY_MAX_INPUTS], *pin_c[PARITY_MAX_INPUTS], *pin_a[PARITY_MAX_INPUTS];
  const pt_tensor *pout_o[PARITY_MAX_OUTPUTS], *pout_c[PARITY_MAX_OUTPUTS], *pout_a[PARITY_MAX_OUTPUTS];
  int accum = c->k > 0 || c->direction == PARITY_DIRECTION_BACKWARD;
  double *backing[PARITY_MAX_INPUTS] = {0};
  for (uint32_t i = 0; i < c->nin; i++) {
    const ot_view *v = &c->in[i];
    pin_o[i] = pin_c[i] = pin_a[i] = NULL;
    if (!v->dtype) continue;
    int64_t span = ot_span(v);
    double *vals = malloc(sizeof(double) * (size_t)span), *absv = malloc(sizeof(double) * (size_t)span);
    backing[i] = vals;
    for (int64_t j = 0; j < span; j++) {
      double r = c->values[i] ? c->values[i][j] : c->lo + (c->hi - c->lo) * ot_rand(&seed);
      if (!c->values[i] && (c->whole || !ot_is_float(v->dtype)))
        r = v->dtype == PARITY_DTYPE_BOOL ? (double)(ot_rand(&seed) < 0.5) : floor(r);
      if (!c->values[i] && ot_is_float(v->dtype) && j < c->nspecials) r = c->specials[j];
      vals[j] = ot_round(r, v->dtype);
      absv[j] = fabs(vals[j]);
    }
    int32_t odt = ot_is_float(v->dtype) && !c->oracle_same_dtype ? PARITY_DTYPE_F64 : v->dtype;
    oi[i] = ot_make(ocl, v, v->dtype, vals);
    ci[i] = ot_make(cpu, v, odt, vals);
    pin_o[i] = &oi[i];
    pin_c[i] = &ci[i];
    if (accum) {
      ai[i] = ot_make(cpu, v, odt, absv);
      pin_a[i] = &ai[i];
    }
    free(absv);
  }
  for (uint32_t i = 0; i < c->nout; i++) {
    const ot_view *v = &c->out[i];
    pout_o[i] = pout_c[i] = pout_a[i] = NULL;
    if (!v->dtype) continue;
    int64_t span = ot_span(v);
    double *fill = malloc(sizeof(double) * (size_t)span);
    for (int64_t j = 0; j < span; j++) fill[j] = v->dtype == PARITY_DTYPE_BOOL ? 1 : OT_SENTINEL;
    int32_t odt = ot_is_float(v->dtype) && !c->oracle_same_dtype ? PARITY_DTYPE_F64 : v->dtype;
    oo[i] = ot_make(ocl, v, v->dtype, fill);
    co[i] = ot_make(cpu, v, odt, fill);
    pout_o[i] = &oo[i];
    pout_c[i] = &co[i];
    if (accum) {
      ao[i] = ot_make(cpu, v, odt, fill);
      pout_a[i] = &ao[i];
    }
    free(fill);
  }
  const parity_op_params_t *pp = &c->params;
  parity_status_t st = pt_run(ocl, c->op, c->direction, pin_o, c->nin, pout_o, c->nout, pp);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s: opencl: %s", c->name, parity_last_error());
  st = pt_run(cpu, c->op, c->direction, pin_c, c->nin, pout_c, c->nout, pp);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s: cpu oracle: %s", c->name, parity_last_error());
  if (accum) {
    st = pt_run(cpu, c->op, c->direction, pin_a, c->nin, pout_a, c->nout, pp);
    cr_assert_eq(st, PARITY_STATUS_OK, "%s: cpu |x| run: %s", c->name, parity_last_error());
  }
  for (uint32_t i = 0; i < c->nout; i++) {
    const ot_view *v = &c->out[i];
    if (!v->dtype) continue;
    int64_t n = ot_numel(v), span = ot_span(v);
    int32_t dt = v->dtype;
    double *got = malloc(sizeof(double) * (size_t)(n + 1)), *ref = malloc(sizeof(double) * (size_t)(n + 1));
    double *s = malloc(sizeof(double) * (size_t)(n + 1));
    pt_tensor_read(&oo[i], got);
    pt_tensor_read(&co[i], ref);
    if (accum) pt_tensor_read(&ao[i], s);
    if (accum && i == 0 && c->s_of) c->s_of(c, backing, s);
    int exact = !ot_is_float(dt) || c->oracle_same_dtype || (!accum && psup_op_is_exact(c->op, dt));
    for (int64_t j = 0; j < n; j++) {
      double want = ot_round(ref[j], dt);
      res.checked++;
      if (exact) {
        cr_assert(ot_same_bits(got[j], want), "%s %s %s: output %u element %lld: got %.17g, want %.17g (exact)",
                  c->name, psup_direction_name(c->direction), psup_dtype_name(dt), i, (long long)j, got[j], want);
      } else if (!accum) {
        if (ot_same_bits(got[j], want)) continue;
        double u = psup_ulp_distance(got[j], ref[j], dt), bound = psup_ulp_bound(c->op, dt);
        if (u > res.max_ulp) res.max_ulp = u;
        cr_assert(u <= bound, "%s %s: output %u element %lld: got %.17g, ref %.17g: %.2f ulp > %.1f", c->name,
                  psup_dtype_name(dt), i, (long long)j, got[j], ref[j], u, bound);
      } else {
        if (ot_same_bits(got[j], want) || (isnan(got[j]) && isnan(ref[j]))) continue;
        double sv = fmax(fabs(s[j]), fabs(ref[j]));
        double bound = psup_accum_bound(dt, ref[j], sv, c->k > 0 ? c->k : 1), err = fabs(got[j] - ref[j]);
        if (bound > 0 && err / bound > res.max_ratio) res.max_ratio = err / bound;
        cr_assert(err <= bound,
                  "%s %s %s: output %u element %lld: got %.17g, ref %.17g (S %.3g): error %.3g > "
                  "bound %.3g",
                  c->name, psup_direction_name(c->direction), psup_dtype_name(dt), i, (long long)j, got[j], ref[j], sv,
                  err, bound);
      }
    }
    /* no stray writes: positions outside the view keep the sentinel */
    uint32_t esz = psup_dtype_size(dt);
    size_t bytes = (size_t)span * esz;
    unsigned char *raw = malloc(bytes + 1);
    cr_assert_eq(parity_buffer_read(oo[i].buf, 0, raw, bytes), PARITY_STATUS_OK);
    char *hit = calloc((size_t)span, 1);
    int64_t idx[PARITY_MAX_RANK] = {0};
    for (int64_t j = 0; j < n; j++) {
      int64_t off = v->offset;
      for (uint32_t a = 0; a < v->rank; a++) off += idx[a] * v->strides[a];
      hit[off] = 1;
      for (int32_t a = (int32_t)v->rank - 1; a >= 0 && ++idx[a] == v->shape[a]; a--) idx[a] = 0;
    }
    for (int64_t j = 0; j < span; j++)
      if (!hit[j])
        cr_assert_eq(psup_load_f64(raw + j * esz, dt), dt == PARITY_DTYPE_BOOL ? 1 : OT_SENTINEL,
                     "%s: output %u: stray write at element %lld", c->name, i, (long long)j);
    free(hit);
    free(raw);
    free(got);
    free(ref);
    free(s);
  }
  /* determinism: a second run gives the same bytes */
  unsigned char *first[PARITY_MAX_OUTPUTS] = {0};
  size_t nbytes[PARITY_MAX_OUTPUTS] = {0};
  for (uint32_t i = 0; i < c->nout; i++) {
    if (!c->out[i].dtype) continue;
    nbytes[i] = (size_t)ot_span(&c->out[i]) * psup_dtype_size(c->out[i].dtype);
    first[i] = malloc(nbytes[i] + 1);
    cr_assert_eq(parity_buffer_read(oo[i].buf, 0, first[i], nbytes[i]), PARITY_STATUS_OK);
  }
  st = pt_run(ocl, c->op, c->direction, pin_o, c->nin, pout_o, c->nout, pp);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s: opencl rerun: %s", c->name, parity_last_error());
  for (uint32_t i = 0; i < c->nout; i++) {
    if (!c->out[i].dtype) continue;
    unsigned char *second = malloc(nbytes[i] + 1);
    cr_assert_eq(parity_buffer_read(oo[i].buf, 0, second, nbytes[i]), PARITY_STATUS_OK);
    cr_assert_eq(memcmp(first[i], second, nbytes[i]), 0, "%s: output %u differs between two runs", c->name, i);
    free(second);
    free(first[i]);
  }
  for (uint32_t i = 0; i < c->nin; i++)
    if (c->in[i].dtype) {
      free(backing[i]);
      pt_tensor_free(&oi[i]);
      pt_tensor_free(&ci[i]);
      if (accum) pt_tensor_free(&ai[i]);
    }
  for (uint32_t i = 0; i < c->nout; i++)
    if (c->out[i].dtype) {
      pt_tensor_free(&oo[i]);
      pt_tensor_free(&co[i]);
      if (accum) pt_tensor_free(&ao[i]);
    }
  return res;
}

#endif
