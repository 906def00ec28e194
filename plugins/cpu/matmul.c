/* matmul.c — the matmul kernel family: c[..,m,n] = a[..,m,k] · b[..,k,n] and its backward
 * da = dc · bᵀ, db = aᵀ · dc, each at the full batch shape (the host sums broadcast axes).
 * Operands may be strided, transposed or broadcast (stride 0); k = 0 gives zeros.
 * f32/f16/bf16 run on the blocked engine (gemm.c); f64 is the plain reference loop below.
 * Shapes and dtypes are the operand contract's (psup_check_operands, in cpu_plugin.c's supports()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dense_common.h"
#include "gemm.h"

/* ---- problem setup ---------------------------------------------------------------------- */
/* Operand view of a rank-r tensor as a matrix; transposed swaps its last two axes. */
static gemm_operand_t view(const parity_tensor_desc_t *t, int transposed) {
  gemm_operand_t op;
  memset(&op, 0, sizeof op);
  uint32_t r = t->rank;
  op.base = dense_base(t);
  op.dtype = t->dtype;
  uint32_t ri = transposed ? r - 1 : r - 2, ci = transposed ? r - 2 : r - 1;
  op.row = gemm_axis_linear(t->shape[ri], t->strides[ri]);
  op.col = gemm_axis_linear(t->shape[ci], t->strides[ci]);
  return op;
}

/* c = op(a) · op(b) over the batch axes (rank - 2 <= PARITY_MAX_RANK - 2 == GEMM_MAX_BATCH). */
static void make_problem(gemm_problem_t *p, const parity_tensor_desc_t *a, int ta, const parity_tensor_desc_t *b,
                         int tb, const parity_tensor_desc_t *c) {
  memset(p->batch_shape, 0, sizeof p->batch_shape); /* a, b, c are set whole below */
  memset(&p->bias, 0, sizeof p->bias);
  uint32_t r = c->rank;
  p->a = view(a, ta);
  p->b = view(b, tb);
  p->c = view(c, 0);
  p->m = c->shape[r - 2];
  p->n = c->shape[r - 1];
  p->k = ta ? a->shape[r - 2] : a->shape[r - 1];
  p->batch_rank = (int32_t)r - 2;
  for (uint32_t i = 0; i + 2 < r; i++) {
    p->batch_shape[i] = c->shape[i];
    p->a.batch_stride[i] = a->strides[i];
    p->b.batch_stride[i] = b->strides[i];
    p->c.batch_stride[i] = c->strides[i];
  }
  p->init = GEMM_INIT_ZERO;
}

/* ---- f64 reference ---------------------------------------------------------------------- */
/* c[i,j] = sum over p in order of a[i,p]*b[p,j], accumulated in f64 from 0. Tasks of up to
 * MM64_ROWS rows × MM64_COLS columns share each loaded row of b; the sum of every element is
 * the plain sequential one whatever the blocking or thread count. */
#define MM64_ROWS 16
#define MM64_COLS 256

static void matmul_f64_block(const gemm_problem_t *p, int64_t oa, int64_t ob, int64_t oc, int64_t i0, int64_t rows,
                             int64_t j0, int64_t cols) {
  const double *A = (const double *)p->a.base, *B = (const double *)p->b.base;
  double *C = (double *)p->c.base;
  int64_t ars = p->a.row.stride[0], acs = p->a.col.stride[0];
  int64_t brs = p->b.row.stride[0], bcs = p->b.col.stride[0];
  int64_t crs = p->c.row.stride[0], ccs = p->c.col.stride[0];
  double acc[MM64_ROWS][MM64_COLS], bq[MM64_COLS];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < MM64_COLS; j++) acc[r][j] = 0.0;
  for (int64_t q = 0; q < p->k; q++) {
    const double *brow = B + ob + q * brs + j0 * bcs;
    for (int64_t j = 0; j < cols; j++) bq[j] = brow[j * bcs];
    for (int64_t r = 0; r < rows; r++) {
      double av = A[oa + (i0 + r) * ars + q * acs];
      if (cols == MM64_COLS) /* a constant trip count the compiler vectorizes */
        for (int64_t j = 0; j < MM64_COLS; j++) acc[r][j] += av * bq[j];
      else
        for (int64_t j = 0; j < cols; j++) acc[r][j] += av * bq[j];
    }
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++) C[oc + (i0 + r) * crs + (j0 + j) * ccs] = acc[r][j];
}

static void matmul_f64(const gemm_problem_t *p) {
  int64_t batch = 1;
  for (int32_t i = 0; i < p->batch_rank; i++) batch *= p->batch_shape[i];
  int64_t rt = (p->m + MM64_ROWS - 1) / MM64_ROWS, ct = (p->n + MM64_COLS - 1) / MM64_COLS;
  int64_t tasks = batch * rt * ct;
  int par = (double)batch * (double)p->m * (double)p->n * (double)p->k >= (double)(1 << 18);
  (void)par; /* unused without OpenMP */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (par)
#endif
  for (int64_t t = 0; t < tasks; t++) {
    int64_t jb = t % ct, ib = (t / ct) % rt, bi = t / (ct * rt), oa = 0, ob = 0, oc = 0;
    for (int32_t ax = p->batch_rank - 1; ax >= 0; ax--) {
      int64_t idx = bi % p->batch_shape[ax];
      bi /= p->batch_shape[ax];
      oa += idx * p->a.batch_stride[ax];
      ob += idx * p->b.batch_stride[ax];
      oc += idx * p->c.batch_stride[ax];
    }
    int64_t i0 = ib * MM64_ROWS, j0 = jb * MM64_COLS;
    matmul_f64_block(p, oa, ob, oc, i0, p->m - i0 < MM64_ROWS ? p->m - i0 : MM64_ROWS, j0,
                     p->n - j0 < MM64_COLS ? p->n - j0 : MM64_COLS);
  }
}

static int32_t run(const gemm_problem_t *p, const char *what) {
  if (p->c.dtype == PARITY_DTYPE_F64) {
    matmul_f64(p);
    return PARITY_STATUS_OK;
  }
  return cpu_gemm_f32(p, what);
}

/* Everything a launch derives from its descriptor: up to two problems (backward: da, db). */
typedef struct mm_launch {
  int count;
  gemm_problem_t p[2];
  const char *what[2];
} mm_launch;

static void derive(const parity_op_desc_t *d, mm_launch *l) {
  l->count = 0;
  if (d->direction == PARITY_DIRECTION_FORWARD) {
    make_problem(&l->p[0], d->inputs[0], 0, d->inputs[1], 0, d->outputs[0]);
    l->what[l->count++] = "matmul forward";
    return;
  }
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *dc = d->inputs[2];
  if (d->outputs[0]) { /* da[m,k] = dc[m,n] · bᵀ[n,k] */
    make_problem(&l->p[l->count], dc, 0, b, 1, d->outputs[0]);
    l->what[l->count++] = "matmul backward (da)";
  }
  if (d->outputs[1]) { /* db[k,n] = aᵀ[k,m] · dc[m,n] */
    make_problem(&l->p[l->count], a, 1, dc, 0, d->outputs[1]);
    l->what[l->count++] = "matmul backward (db)";
  }
}

static int32_t launch(const void *state) {
  const mm_launch *l = state;
  int32_t st = PARITY_STATUS_OK;
  for (int i = 0; i < l->count && st == PARITY_STATUS_OK; i++) st = run(&l->p[i], l->what[i]);
  return st;
}

CPU_LAUNCH_ENTRIES(matmul, mm_launch)
