/* CPU elementwise kernels over every layout the ABI allows: empty and scalar tensors, odd
 * sizes, transposed / stepped / offset / reversed operands, zero-stride broadcasts, in-place
 * outputs, and large tensors that take the parallel path. Also: supports() turns malformed or
 * unprovided descriptors away with a message and leaves outputs untouched. */
#include "cpu_expf.h"
#include "elementwise_test.h"

#define SENTINEL 0xab

/* A float view over a host mirror: element (i, j) of a rank-2 view lives at
 * host[offset + i*s0 + j*s1]. The device buffer holds the same bytes. */
typedef struct view {
  pt_tensor t;
  int32_t dtype;
  int64_t elems, offset, s0, s1;
  unsigned char *host;
} view;

static view view_new(int32_t dtype, int64_t elems, const int64_t *shape2, int64_t s0, int64_t s1, int64_t offset,
                     uint64_t *seed) {
  view v;
  v.dtype = dtype;
  v.elems = elems;
  v.offset = offset;
  v.s0 = s0;
  v.s1 = s1;
  uint32_t esz = psup_dtype_size(dtype);
  v.host = malloc((size_t)(elems * esz));
  memset(v.host, SENTINEL, (size_t)(elems * esz));
  if (seed)
    for (int64_t i = 0; i < elems; i++) {
      double x = dtype == PARITY_DTYPE_BOOL ? (ewt_rand(seed, 0, 1) < 0.5) : ewt_rand(seed, -3, 3);
      psup_store_f64(v.host + i * esz, dtype, x);
    }
  int64_t strides[2] = {s0, s1};
  v.t = ewt_raw(dtype, elems, SENTINEL, 2, shape2, strides, offset);
  ewt_write_bytes(&v.t, v.host, (uint64_t)(elems * esz));
  return v;
}

static int64_t view_pos(const view *v, int64_t i, int64_t j) { return v->offset + i * v->s0 + j * v->s1; }
static double view_get(const view *v, int64_t i, int64_t j) {
  return psup_load_f64(v->host + view_pos(v, i, j) * psup_dtype_size(v->dtype), v->dtype);
}
static void view_free(view *v) {
  pt_tensor_free(&v->t);
  free(v->host);
}

/* Read an output view back; every position outside the view must still hold the sentinel. */
static void view_fetch(view *v, const int64_t *shape2) {
  uint32_t esz = psup_dtype_size(v->dtype);
  ewt_read_bytes(&v->t, v->host, (uint64_t)(v->elems * esz));
  char *inside = calloc((size_t)v->elems, 1);
  for (int64_t i = 0; i < shape2[0]; i++)
    for (int64_t j = 0; j < shape2[1]; j++) inside[view_pos(v, i, j)] = 1;
  for (int64_t k = 0; k < v->elems; k++)
    if (!inside[k])
      for (uint32_t b = 0; b < esz; b++)
        cr_assert_eq(v->host[k * esz + b], SENTINEL, "byte %u of element %lld outside the view was written", b,
                     (long long)k);
  free(inside);
}

static void run_ok(int32_t op, int32_t dir, const view *const *in, uint32_t nin, view *const *out, uint32_t nout,
                   double alpha) {
  const pt_tensor *pi[PARITY_MAX_INPUTS], *po[PARITY_MAX_OUTPUTS];
  for (uint32_t k = 0; k < nin; k++) pi[k] = &in[k]->t;
  for (uint32_t k = 0; k < nout; k++) po[k] = out[k] ? &out[k]->t : NULL;
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.unary.alpha = alpha;
  cr_assert_eq(pt_run(ewt_dev(), op, dir, pi, nin, po, nout, &p), PARITY_STATUS_OK, "%s", parity_last_error());
}

/* Layouts of a [5, 7] operand, each over its own buffer. */
enum { M = 5, N = 7 };
static const int64_t shape57[2] = {M, N};
typedef struct layout {
  const char *name;
  int64_t elems, s0, s1, offset;
} layout;
static const layout layouts[] = {
    {"contiguous", M *N, N, 1, 0},
    {"transposed", M *N, 1, M, 0},
    {"stepped+offset", 2 * M *N + 3, 2 * N, 2, 3},
    {"reversed rows", 2 * M *N + 3, -2 * N, 2, 3 + (M - 1) * 2 * N},
    {"reversed columns", M *N + 1, N, -1, N},
    {"row broadcast", N, 0, 1, 0},
    {"column broadcast", M, 1, 0, 0},
    {"scalar broadcast", 1, 0, 0, 0},
};
#define NLAYOUTS (sizeof layouts / sizeof layouts[0])
/* outputs never broadcast */
#define NOUT_LAYOUTS 5

static view layout_view(int32_t dtype, const layout *l, uint64_t *seed) {
  return view_new(dtype, l->elems, shape57, l->s0, l->s1, l->offset, seed);
}

Test(elementwise_layout, binary_forward_and_backward_follow_any_input_and_output_strides) {
  uint64_t seed = 1;
  for (size_t la = 0; la < NLAYOUTS; la++)
    for (size_t lb = 0; lb < NLAYOUTS; lb++)
      for (size_t lo = 0; lo < NOUT_LAYOUTS; lo++) {
        view a = layout_view(PARITY_DTYPE_F32, &layouts[la], &seed),
             b = layout_view(PARITY_DTYPE_F32, &layouts[lb], &seed);
        view c = layout_view(PARITY_DTYPE_F32, &layouts[lo], NULL);
        const view *in[2] = {&a, &b};
        view *out[1] = {&c};
        run_ok(PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in, 2, out, 1, 0);
        view_fetch(&c, shape57);
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            float want = (float)view_get(&a, i, j) * (float)view_get(&b, i, j);
            cr_assert_eq((float)view_get(&c, i, j), want, "mul a %s b %s c %s at (%lld,%lld)", layouts[la].name,
                         layouts[lb].name, layouts[lo].name, (long long)i, (long long)j);
          }
        /* backward: dc in the output's layout, da/db (full shape) in two other layouts */
        view dc = layout_view(PARITY_DTYPE_F32, &layouts[(lo + 1) % NOUT_LAYOUTS], &seed);
        view da = layout_view(PARITY_DTYPE_F32, &layouts[(lo + 2) % NOUT_LAYOUTS], NULL);
        view db = layout_view(PARITY_DTYPE_F32, &layouts[(lo + 3) % NOUT_LAYOUTS], NULL);
        const view *bin[4] = {&a, &b, &c, &dc};
        view *bout[2] = {&da, &db};
        run_ok(PARITY_OP_MUL, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, 0);
        view_fetch(&da, shape57);
        view_fetch(&db, shape57);
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            float g = (float)view_get(&dc, i, j);
            cr_assert_eq((float)view_get(&da, i, j), g * (float)view_get(&b, i, j), "mul da at (%lld,%lld)",
                         (long long)i, (long long)j);
            cr_assert_eq((float)view_get(&db, i, j), g * (float)view_get(&a, i, j), "mul db at (%lld,%lld)",
                         (long long)i, (long long)j);
          }
        view_free(&a);
        view_free(&b);
        view_free(&c);
        view_free(&dc);
        view_free(&da);
        view_free(&db);
      }
}

Test(elementwise_layout, unary_compare_where_and_cast_follow_any_strides) {
  uint64_t seed = 2;
  for (size_t li = 0; li < NLAYOUTS; li++) {
    size_t lo = li % NOUT_LAYOUTS, lo2 = (li + 2) % NOUT_LAYOUTS;
    /* unary f16 exp */
    view x = layout_view(PARITY_DTYPE_F16, &layouts[li], &seed), y = layout_view(PARITY_DTYPE_F16, &layouts[lo], NULL);
    const view *in1[1] = {&x};
    view *out1[1] = {&y};
    run_ok(PARITY_OP_EXP, PARITY_DIRECTION_FORWARD, in1, 1, out1, 1, 0);
    view_fetch(&y, shape57);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        cr_assert_eq(view_get(&y, i, j), psup_f16_to_f32(psup_f32_to_f16(expf((float)view_get(&x, i, j)))),
                     "f16 exp %s -> %s", layouts[li].name, layouts[lo].name);
    /* compare lt against a contiguous operand */
    view b = layout_view(PARITY_DTYPE_F16, &layouts[0], &seed), m = layout_view(PARITY_DTYPE_BOOL, &layouts[lo2], NULL);
    const view *in2[2] = {&x, &b};
    view *out2[1] = {&m};
    run_ok(PARITY_OP_LT, PARITY_DIRECTION_FORWARD, in2, 2, out2, 1, 0);
    view_fetch(&m, shape57);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        cr_assert_eq(view_get(&m, i, j), view_get(&x, i, j) < view_get(&b, i, j), "lt %s", layouts[li].name);
    /* where with a cond in this layout */
    view cond = layout_view(PARITY_DTYPE_BOOL, &layouts[li], &seed),
         w = layout_view(PARITY_DTYPE_F16, &layouts[lo], NULL);
    const view *in3[3] = {&cond, &x, &b};
    view *out3[1] = {&w};
    run_ok(PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, in3, 3, out3, 1, 0);
    view_fetch(&w, shape57);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        cr_assert_eq(view_get(&w, i, j), view_get(&cond, i, j) ? view_get(&x, i, j) : view_get(&b, i, j), "where %s",
                     layouts[li].name);
    /* cast f16 -> f64 */
    view d = layout_view(PARITY_DTYPE_F64, &layouts[lo2], NULL);
    view *out4[1] = {&d};
    run_ok(PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, in1, 1, out4, 1, 0);
    view_fetch(&d, shape57);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) cr_assert_eq(view_get(&d, i, j), view_get(&x, i, j), "cast %s", layouts[li].name);
    view_free(&x);
    view_free(&y);
    view_free(&b);
    view_free(&m);
    view_free(&cond);
    view_free(&w);
    view_free(&d);
  }
}

Test(elementwise_layout, broadcast_backward_gives_full_shape_gradients) {
  /* b broadcast along rows: db has the full [5,7] shape, one value per (i, j); the core sums */
  uint64_t seed = 3;
  view a = layout_view(PARITY_DTYPE_F64, &layouts[0], &seed), b = layout_view(PARITY_DTYPE_F64, &layouts[5], &seed);
  view c = layout_view(PARITY_DTYPE_F64, &layouts[0], NULL), dc = layout_view(PARITY_DTYPE_F64, &layouts[0], &seed);
  view da = layout_view(PARITY_DTYPE_F64, &layouts[0], NULL), db = layout_view(PARITY_DTYPE_F64, &layouts[0], NULL);
  const view *in[2] = {&a, &b}, *bin[4] = {&a, &b, &c, &dc};
  view *out[1] = {&c}, *bout[2] = {&da, &db};
  run_ok(PARITY_OP_DIV, PARITY_DIRECTION_FORWARD, in, 2, out, 1, 0);
  view_fetch(&c, shape57);
  run_ok(PARITY_OP_DIV, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, 0);
  view_fetch(&da, shape57);
  view_fetch(&db, shape57);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double bv = view_get(&b, 0, j), g = view_get(&dc, i, j);
      cr_assert_eq(view_get(&c, i, j), view_get(&a, i, j) / bv);
      cr_assert_eq(view_get(&da, i, j), g / bv);
      cr_assert_eq(view_get(&db, i, j), -(g / bv) * view_get(&c, i, j));
    }
  view_free(&a);
  view_free(&b);
  view_free(&c);
  view_free(&dc);
  view_free(&da);
  view_free(&db);
}

Test(elementwise_layout, empty_tensors_return_ok_and_write_nothing) {
  const int64_t shapes[3][2] = {{0, 1}, {3, 0}, {0, 4}};
  for (int s = 0; s < 3; s++) {
    view in[4], out[2];
    for (int k = 0; k < 4; k++)
      in[k] = view_new(k == 0 ? PARITY_DTYPE_BOOL : PARITY_DTYPE_F32, 4, shapes[s], 4, 1, 0, NULL);
    for (int k = 0; k < 2; k++) out[k] = view_new(PARITY_DTYPE_F32, 4, shapes[s], 4, 1, 0, NULL);
    const view *u[1] = {&in[1]}, *ub[3] = {&in[1], &in[2], &in[3]}, *bn[2] = {&in[1], &in[2]};
    const view *bb[4] = {&in[1], &in[2], &in[3], &in[1]}, *wh[3] = {&in[0], &in[1], &in[2]}, *whb[2] = {&in[0], &in[1]};
    view *o1[1] = {&out[0]}, *o2[2] = {&out[0], &out[1]};
    run_ok(PARITY_OP_EXP, PARITY_DIRECTION_FORWARD, u, 1, o1, 1, 0);
    run_ok(PARITY_OP_TANH, PARITY_DIRECTION_BACKWARD, ub, 3, o1, 1, 0);
    run_ok(PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, bn, 2, o1, 1, 0);
    run_ok(PARITY_OP_POW, PARITY_DIRECTION_BACKWARD, bb, 4, o2, 2, 0);
    run_ok(PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, wh, 3, o1, 1, 0);
    run_ok(PARITY_OP_WHERE, PARITY_DIRECTION_BACKWARD, whb, 2, o2, 2, 0);
    run_ok(PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, u, 1, o1, 1, 0);
    for (int k = 0; k < 2; k++) {
      unsigned char bytes[16];
      ewt_read_bytes(&out[k].t, bytes, 16);
      for (int i = 0; i < 16; i++)
        cr_assert_eq(bytes[i], SENTINEL, "shape [%lld,%lld]: output %d byte %d written", (long long)shapes[s][0],
                     (long long)shapes[s][1], k, i);
    }
    for (int k = 0; k < 4; k++) view_free(&in[k]);
    for (int k = 0; k < 2; k++) view_free(&out[k]);
  }
}

Test(elementwise_layout, rank0_scalars_and_size_one_tensors) {
  parity_device_t *dev = ewt_dev();
  const double a = 1.5, b = -2.25;
  pt_tensor ta = pt_tensor_new(dev, PARITY_DTYPE_F32, 0, NULL, &a),
            tb = pt_tensor_new(dev, PARITY_DTYPE_F32, 0, NULL, &b);
  pt_tensor tc = pt_tensor_new(dev, PARITY_DTYPE_F32, 0, NULL, NULL);
  const pt_tensor *in[2] = {&ta, &tb}, *out[1] = {&tc};
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  double c;
  pt_tensor_read(&tc, &c);
  cr_assert_eq(c, -3.375);
  pt_tensor_free(&ta);
  pt_tensor_free(&tb);
  pt_tensor_free(&tc);
  const int64_t ones[3] = {1, 1, 1};
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_BF16, 3, ones, &b),
            y = pt_tensor_new(dev, PARITY_DTYPE_BF16, 3, ones, NULL);
  x.desc.strides[0] = 99; /* strides of size-1 axes never matter */
  const pt_tensor *in1[1] = {&x}, *out1[1] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_ABS, PARITY_DIRECTION_FORWARD, in1, 1, out1, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  pt_tensor_read(&y, &c);
  cr_assert_eq(c, 2.25);
  pt_tensor_free(&x);
  pt_tensor_free(&y);
}

Test(elementwise_layout, odd_sizes_contiguous_and_stepped) {
  const int64_t sizes[] = {1, 3, 31, 33, 257, 1025};
  uint64_t seed = 4;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int step = 1; step <= 3; step += 2) {
      int64_t n = sizes[s], shape[2] = {1, n};
      view a = view_new(PARITY_DTYPE_F32, n * step, shape, n * step, step, 0, &seed);
      view b = view_new(PARITY_DTYPE_F32, n * step, shape, n * step, step, 0, &seed);
      view c = view_new(PARITY_DTYPE_F32, n * step, shape, n * step, step, 0, NULL);
      view e = view_new(PARITY_DTYPE_F32, n, shape, n, 1, 0, NULL);
      const view *in[2] = {&a, &b};
      view *out[1] = {&c}, *oute[1] = {&e};
      run_ok(PARITY_OP_SUB, PARITY_DIRECTION_FORWARD, in, 2, out, 1, 0);
      run_ok(PARITY_OP_SIGMOID, PARITY_DIRECTION_FORWARD, in, 1, oute, 1, 0);
      view_fetch(&c, shape);
      view_fetch(&e, shape);
      for (int64_t j = 0; j < n; j++) {
        float fa = (float)view_get(&a, 0, j), fb = (float)view_get(&b, 0, j);
        cr_assert_eq((float)view_get(&c, 0, j), fa - fb, "n=%lld step %d element %lld", (long long)n, step,
                     (long long)j);
        const float ex = cpu_expf_nonpos(-fabsf(fa));
        float sg = fa >= 0 ? 1.0f / (1.0f + ex) : ex / (1.0f + ex);
        cr_assert_eq((float)view_get(&e, 0, j), sg, "sigmoid n=%lld step %d element %lld", (long long)n, step,
                     (long long)j);
      }
      view_free(&a);
      view_free(&b);
      view_free(&c);
      view_free(&e);
    }
}

/* ---- in place --------------------------------------------------------------------------------- */

Test(elementwise_layout, forward_ops_may_run_in_place) {
  parity_device_t *dev = ewt_dev();
  enum { K = 100003 }; /* also through the parallel path */
  int64_t n = K;
  double *x = malloc(sizeof(double) * K), *b = malloc(sizeof(double) * K), *got = malloc(sizeof(double) * K);
  uint64_t seed = 5;
  for (int i = 0; i < K; i++) {
    x[i] = ewt_round(PARITY_DTYPE_F32, ewt_rand(&seed, -3, 3));
    b[i] = ewt_round(PARITY_DTYPE_F32, ewt_rand(&seed, -3, 3));
  }
  pt_tensor t = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, &n, x), tb = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, &n, b);
  const pt_tensor *in1[1] = {&t}, *out1[1] = {&t}, *in2[2] = {&tb, &t};
  cr_assert_eq(pt_run(dev, PARITY_OP_RELU, PARITY_DIRECTION_FORWARD, in1, 1, out1, 1, NULL), PARITY_STATUS_OK);
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK);
  cr_assert_eq(pt_run(dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, in1, 1, out1, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_read(&t, got);
  for (int i = 0; i < K; i++) {
    float want = (float)b[i] + (x[i] > 0 ? (float)x[i] : 0.0f);
    cr_assert_eq((float)got[i], want, "element %d: %g, want %g", i, got[i], want);
  }
  pt_tensor_free(&t);
  pt_tensor_free(&tb);
  free(x);
  free(b);
  free(got);
}

/* ---- the parallel path ------------------------------------------------------------------------ */

/* Bytes of op's output over n elements of dtype (inputs from a fixed seed): whole tensor in one
 * call with `threads` OpenMP threads (0: leave the default), or in chunks small enough for the
 * serial path. */
static unsigned char *large_run(int32_t op, int32_t dtype, int64_t n, int threads, int chunked) {
  parity_device_t *dev = ewt_dev();
  double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
  uint64_t seed = 6;
  for (int64_t i = 0; i < n; i++) {
    a[i] = ewt_rand(&seed, -4, 4);
    b[i] = ewt_rand(&seed, -4, 4);
  }
  int unary = psup_op_info(op)->kind == PARITY_OP_KIND_UNARY;
  pt_tensor ta = pt_tensor_new(dev, dtype, 1, &n, a), tb = pt_tensor_new(dev, dtype, 1, &n, b);
  pt_tensor tc = pt_tensor_new(dev, dtype, 1, &n, NULL);
  if (threads) ewt_set_threads(threads);
  const int64_t chunk = chunked ? 40000 : n; /* < CPU_PARALLEL_MIN_ELEMENTS (65536) */
  uint32_t esz = psup_dtype_size(dtype);
  for (int64_t start = 0; start < n; start += chunk) {
    pt_tensor va = ta, vb = tb, vc = tc;
    int64_t len = n - start < chunk ? n - start : chunk;
    va.desc.shape[0] = vb.desc.shape[0] = vc.desc.shape[0] = len;
    va.desc.offset_bytes = vb.desc.offset_bytes = vc.desc.offset_bytes = (uint64_t)(start * esz);
    const pt_tensor *in[2] = {&va, &vb}, *out[1] = {&vc};
    cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, unary ? 1 : 2, out, 1, NULL), PARITY_STATUS_OK, "%s",
                 parity_last_error());
  }
  if (threads) ewt_set_threads(2);
  unsigned char *bytes = malloc((size_t)(n * esz));
  ewt_read_bytes(&tc, bytes, (uint64_t)(n * esz));
  pt_tensor_free(&ta);
  pt_tensor_free(&tb);
  pt_tensor_free(&tc);
  free(a);
  free(b);
  return bytes;
}

Test(elementwise_layout, large_tensors_take_the_parallel_path_and_match_the_serial_result_bitwise) {
  const struct {
    int32_t op, dtype;
  } c[] = {
      {PARITY_OP_EXP, PARITY_DTYPE_F32},   {PARITY_OP_ADD, PARITY_DTYPE_F32}, {PARITY_OP_MUL, PARITY_DTYPE_F16},
      {PARITY_OP_GELU, PARITY_DTYPE_BF16}, {PARITY_OP_POW, PARITY_DTYPE_F64},
  };
  const int64_t n = ((int64_t)1 << 20) + 3;
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    size_t bytes = (size_t)n * psup_dtype_size(c[k].dtype);
    unsigned char *par = large_run(c[k].op, c[k].dtype, n, 0, 0);
    unsigned char *one = large_run(c[k].op, c[k].dtype, n, 1, 0);
    unsigned char *ser = large_run(c[k].op, c[k].dtype, n, 0, 1);
    cr_assert_eq(memcmp(par, one, bytes), 0, "%s %s: default threads differ from 1 thread", psup_op_name(c[k].op),
                 psup_dtype_name(c[k].dtype));
    cr_assert_eq(memcmp(par, ser, bytes), 0, "%s %s: parallel path differs from the serial path", psup_op_name(c[k].op),
                 psup_dtype_name(c[k].dtype));
    free(par);
    free(one);
    free(ser);
  }
}

Test(elementwise_layout, large_transposed_operands_take_the_parallel_path_correctly) {
  enum { R = 257, C = 1031 }; /* R*C > CPU_PARALLEL_MIN_ELEMENTS; rows not a multiple of the block */
  const int64_t shape[2] = {R, C};
  uint64_t seed = 7;
  view a = view_new(PARITY_DTYPE_F32, (int64_t)R * C, shape, 1, R, 0, &seed);
  view b = view_new(PARITY_DTYPE_F32, C, shape, 0, 1, 0, &seed);
  view c = view_new(PARITY_DTYPE_F32, (int64_t)R * C, shape, C, 1, 0, NULL);
  const view *in[2] = {&a, &b};
  view *out[1] = {&c};
  run_ok(PARITY_OP_MAXIMUM, PARITY_DIRECTION_FORWARD, in, 2, out, 1, 0);
  view_fetch(&c, shape);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      double x = view_get(&a, i, j), y = view_get(&b, i, j);
      cr_assert_eq(view_get(&c, i, j), x > y ? x : y, "(%lld,%lld)", (long long)i, (long long)j);
    }
  view_free(&a);
  view_free(&b);
  view_free(&c);
}

Test(elementwise_layout, narrow_inner_axes_are_walked_correctly) {
  /* [R, 3]: the kernel may walk the long axis innermost; transposed and stepped operands */
  const int64_t rows[] = {5, 30001}; /* serial and parallel */
  uint64_t seed = 8;
  for (int r = 0; r < 2; r++) {
    const int64_t R = rows[r], shape[2] = {R, 3};
    view a = view_new(PARITY_DTYPE_F32, 3 * R, shape, 1, R, 0, &seed);     /* transposed */
    view b = view_new(PARITY_DTYPE_F32, 6 * R + 1, shape, 6, 2, 1, &seed); /* stepped + offset */
    view c = view_new(PARITY_DTYPE_F32, 3 * R, shape, 3, 1, 0, NULL);
    view m = view_new(PARITY_DTYPE_BOOL, 3 * R, shape, 1, R, 0, NULL);
    const view *in[2] = {&a, &b};
    view *out[1] = {&c}, *outm[1] = {&m};
    run_ok(PARITY_OP_SUB, PARITY_DIRECTION_FORWARD, in, 2, out, 1, 0);
    run_ok(PARITY_OP_GE, PARITY_DIRECTION_FORWARD, in, 2, outm, 1, 0);
    view_fetch(&c, shape);
    view_fetch(&m, shape);
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < 3; j++) {
        float x = (float)view_get(&a, i, j), y = (float)view_get(&b, i, j);
        cr_assert_eq((float)view_get(&c, i, j), x - y, "R=%lld (%lld,%lld)", (long long)R, (long long)i, (long long)j);
        cr_assert_eq(view_get(&m, i, j), x >= y, "ge R=%lld (%lld,%lld)", (long long)R, (long long)i, (long long)j);
      }
    view_free(&a);
    view_free(&b);
    view_free(&c);
    view_free(&m);
  }
}

/* ---- supports() -------------------------------------------------------------------------------- */

/* Run a descriptor that must be refused: status, a message naming `needles`, outputs untouched. */
static void expect_refused(int32_t op, int32_t dir, const int32_t *dts, const int64_t *sizes, uint32_t nin,
                           uint32_t nout, parity_status_t want, const char *n1, const char *n2) {
  pt_tensor t[7];
  const pt_tensor *in[4], *out[3];
  for (uint32_t k = 0; k < nin + nout; k++) {
    int64_t shape[1] = {sizes[k]};
    t[k] = ewt_raw(dts[k], sizes[k], SENTINEL, 1, shape, NULL, 0);
    if (k < nin)
      in[k] = &t[k];
    else
      out[k - nin] = &t[k];
  }
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = op;
  d.direction = dir;
  d.num_inputs = nin;
  d.num_outputs = nout;
  for (uint32_t k = 0; k < nin; k++) d.inputs[k] = &in[k]->desc;
  for (uint32_t k = 0; k < nout; k++) d.outputs[k] = &out[k]->desc;
  parity_status_t st = parity_device_supports(ewt_dev(), &d);
  cr_assert_eq(st, want, "supports(%s): status %d, want %d (%s)", psup_op_name(op), st, want, parity_last_error());
  st = pt_run(ewt_dev(), op, dir, in, nin, out, nout, NULL);
  cr_assert_eq(st, want, "run(%s): status %d, want %d (%s)", psup_op_name(op), st, want, parity_last_error());
  const char *msg = parity_last_error();
  cr_log_info("%s", msg);
  cr_assert(strstr(msg, psup_op_name(op)) && strstr(msg, n1) && (!n2 || strstr(msg, n2)),
            "message \"%s\" should name %s, %s and %s", msg, psup_op_name(op), n1, n2 ? n2 : "");
  for (uint32_t k = nin; k < nin + nout; k++) {
    unsigned char bytes[64];
    uint64_t sz = (uint64_t)sizes[k] * psup_dtype_size(dts[k]);
    ewt_read_bytes(&t[k], bytes, sz);
    for (uint64_t i = 0; i < sz; i++) cr_assert_eq(bytes[i], SENTINEL, "%s: output written", psup_op_name(op));
  }
  for (uint32_t k = 0; k < nin + nout; k++) pt_tensor_free(&t[k]);
}

Test(elementwise_layout, supports_rejects_malformed_descriptors_with_a_message_and_leaves_outputs_untouched) {
  const int32_t F32 = PARITY_DTYPE_F32, F64 = PARITY_DTYPE_F64, I32 = PARITY_DTYPE_I32;
  const int32_t BWD = PARITY_DIRECTION_BACKWARD, FWD = PARITY_DIRECTION_FORWARD;
  const parity_status_t INV = PARITY_STATUS_INVALID_ARGUMENT, UNS = PARITY_STATUS_UNSUPPORTED;
  /* shapes: the operand contract (psup_check_operands) compares every operand with the output
   * (forward) or the incoming gradient (backward) */
  expect_refused(PARITY_OP_ADD, FWD, (int32_t[]){F32, F32, F32}, (int64_t[]){4, 3, 4}, 2, 1, INV,
                 "input 1 (b) has shape [3]", "output 0 (c) has [4]");
  expect_refused(PARITY_OP_EXP, BWD, (int32_t[]){F32, F32, F32, F32}, (int64_t[]){4, 4, 5, 4}, 3, 1, INV,
                 "input 0 (x) has shape [4]", "the gradient, input 2 (dy) has [5]");
  expect_refused(PARITY_OP_CAST, FWD, (int32_t[]){F32, I32}, (int64_t[]){4, 2}, 1, 1, INV, "input 0 (x) has shape [4]",
                 "output 0 (y) has [2]");
  /* dtypes: a mix, a non-bool compare output or where condition, is a dtype no kernel takes */
  expect_refused(PARITY_OP_ADD, FWD, (int32_t[]){F32, F64, F32}, (int64_t[]){4, 4, 4}, 2, 1, UNS,
                 "input 1 (b) is f64, expected f32 (no mixed dtypes)", NULL);
  expect_refused(PARITY_OP_EQ, FWD, (int32_t[]){F32, F32, F32}, (int64_t[]){4, 4, 4}, 2, 1, UNS,
                 "output must be bool, got f32", NULL);
  expect_refused(PARITY_OP_WHERE, FWD, (int32_t[]){F32, F32, F32, F32}, (int64_t[]){4, 4, 4, 4}, 3, 1, UNS,
                 "condition (input 0) must be bool, got f32", NULL);
  expect_refused(PARITY_OP_MAXIMUM, BWD, (int32_t[]){F32, F32, F32, F32, F32, F64}, (int64_t[]){4, 4, 4, 4, 4, 4}, 4, 2,
                 UNS, "output 1 (db) is f64, expected f32", NULL);
}

Test(elementwise_layout, supports_reports_unprovided_dtype_op_pairs_as_unsupported) {
  const int32_t I32 = PARITY_DTYPE_I32, I64 = PARITY_DTYPE_I64, BOOL = PARITY_DTYPE_BOOL, F16 = PARITY_DTYPE_F16;
  const int32_t BWD = PARITY_DIRECTION_BACKWARD, FWD = PARITY_DIRECTION_FORWARD;
  const parity_status_t UNS = PARITY_STATUS_UNSUPPORTED;
  expect_refused(PARITY_OP_EXP, FWD, (int32_t[]){I32, I32}, (int64_t[]){4, 4}, 1, 1, UNS, "no i32 kernel",
                 "floating dtypes only");
  expect_refused(PARITY_OP_DIV, FWD, (int32_t[]){I64, I64, I64}, (int64_t[]){4, 4, 4}, 2, 1, UNS, "i64", NULL);
  expect_refused(PARITY_OP_ADD, FWD, (int32_t[]){BOOL, BOOL, BOOL}, (int64_t[]){4, 4, 4}, 2, 1, UNS, "bool", NULL);
  expect_refused(PARITY_OP_NEG, FWD, (int32_t[]){BOOL, BOOL}, (int64_t[]){4, 4}, 1, 1, UNS, "bool", NULL);
  expect_refused(PARITY_OP_RELU, BWD, (int32_t[]){I32, I32, I32, I32}, (int64_t[]){4, 4, 4, 4}, 3, 1, UNS, "gradient",
                 "i32");
  expect_refused(PARITY_OP_WHERE, BWD, (int32_t[]){BOOL, I64, I64, I64}, (int64_t[]){4, 4, 4, 4}, 2, 2, UNS, "i64",
                 NULL);
  /* the same ops in a provided dtype are accepted */
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_EXP;
  d.direction = FWD;
  d.num_inputs = d.num_outputs = 1;
  parity_tensor_desc_t x;
  int64_t shape[1] = {4};
  psup_tensor_init(&x, F16, 1, shape, NULL, 0);
  d.inputs[0] = d.outputs[0] = &x;
  cr_assert_eq(parity_device_supports(ewt_dev(), &d), PARITY_STATUS_OK, "%s", parity_last_error());
}
