/* kernels.c — the kernels section: add, exp, tanh, gelu, sum, rowsum, colsum, max, argmax (2^log2n elements), softmax and
 * log_softmax (512 x 32000), matmul 1024^3, conv2d 8x64x56x56 with a 3x3 kernel forward and
 * forward+backward, each beside its references (--quick shrinks every shape). */
#include <stdio.h>
#include <string.h>

#include "blas_ref.h"
#include "sections.h"

static parity_status_t b_add(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_binary(PARITY_OP_ADD, in[0], in[1], out);
}
static parity_status_t b_exp(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_unary(PARITY_OP_EXP, in[0], out);
}
static parity_status_t b_tanh(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_unary(PARITY_OP_TANH, in[0], out);
}
static parity_status_t b_gelu(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_unary(PARITY_OP_GELU, in[0], out);
}
static parity_status_t b_sum(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_SUM, in[0], 0, 0, out);
}
static parity_status_t b_max(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_MAX, in[0], 0, 0, out);
}
static parity_status_t b_argmax(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_ARGMAX, in[0], 0, 0, out);
}
static parity_status_t b_rowsum(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_SUM, in[0], 2, 0, out);
}
static parity_status_t b_colsum(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_SUM, in[0], 1, 0, out);
}
static parity_status_t b_softmax(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_softmax(PARITY_OP_SOFTMAX, in[0], 1, out);
}
static parity_status_t b_log_softmax(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_softmax(PARITY_OP_LOG_SOFTMAX, in[0], 1, out);
}
static parity_status_t b_matmul(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_matmul(in[0], in[1], out);
}
static parity_status_t b_conv(parity_tensor_t **in, parity_tensor_t **out) {
  parity_conv2d_options_t o = {.stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
  return parity_conv2d(in[0], in[1], NULL, &o, out);
}

enum { REF_NONE, REF_READ, REF_ADD, REF_GEMM };

typedef struct kernel {
  const char *name, *torch;
  bench_op_fn fn;
  int nin, rank[2];
  int64_t shape[2][4];
  double work; /* bytes or flops per call */
  int flops, backward, ref;
} kernel;

/* "16777216", "512x32000", "1024x1024x1024" (matmul: M x K x N), "8x64x56x56 * 64x64x3x3" */
static void shape_text(char *out, size_t n, const kernel *k) {
  if (k->ref == REF_GEMM) {
    snprintf(out, n, "%lldx%lldx%lld", (long long)k->shape[0][0], (long long)k->shape[0][1], (long long)k->shape[1][1]);
    return;
  }
  size_t w = 0;
  for (int i = 0; i < k->nin && w < n; i++) {
    if (i && k->rank[1] == k->rank[0] && !memcmp(k->shape[0], k->shape[1], sizeof k->shape[0])) break;
    if (i) w += (size_t)snprintf(out + w, n - w, " * ");
    for (int d = 0; d < k->rank[i] && w < n; d++)
      w += (size_t)snprintf(out + w, n - w, "%s%lld", d ? "x" : "", (long long)k->shape[i][d]);
  }
}

void section_kernels(bench_run *run, parity_device_t *dev, const char *backend) {
  const bench_options *o = run->o;
  int64_t n = 1ll << o->log2n, rows = 1ll << (o->log2n / 2), cols = n / rows;
  int64_t sr = o->quick ? 16 : 512, sc = o->quick ? 1000 : 32000, mm = o->quick ? 64 : 1024;
  int64_t cb = o->quick ? 1 : 8, cc = o->quick ? 8 : 64, hw = o->quick ? 16 : 56;
  double e4 = 4.0 * (double)n, conv = 2.0 * (double)(cb * cc * hw * hw * cc * 9);
  const kernel ks[] = {
      {"add", "add", b_add, 2, {1, 1}, {{n}, {n}}, 3 * e4, 0, 0, REF_ADD},
      {"exp", "exp", b_exp, 1, {1}, {{n}}, 2 * e4, 0, 0, REF_NONE},
      {"tanh", "tanh", b_tanh, 1, {1}, {{n}}, 2 * e4, 0, 0, REF_NONE},
      {"gelu", "gelu", b_gelu, 1, {1}, {{n}}, 2 * e4, 0, 0, REF_NONE},
      {"sum", "sum", b_sum, 1, {1}, {{n}}, e4, 0, 0, REF_READ},
      {"rowsum", "rowsum", b_rowsum, 1, {2}, {{rows, cols}}, e4, 0, 0, REF_READ},
      {"colsum", "colsum", b_colsum, 1, {2}, {{rows, cols}}, e4, 0, 0, REF_READ},
      {"max", "max", b_max, 1, {1}, {{n}}, e4, 0, 0, REF_READ},
      {"argmax", "argmax", b_argmax, 1, {1}, {{n}}, e4, 0, 0, REF_READ},
      {"softmax", "softmax", b_softmax, 1, {2}, {{sr, sc}}, 8.0 * (double)(sr * sc), 0, 0, REF_NONE},
      {"log_softmax", "log_softmax", b_log_softmax, 1, {2}, {{sr, sc}}, 8.0 * (double)(sr * sc), 0, 0, REF_NONE},
      {"matmul", "matmul", b_matmul, 2, {2, 2}, {{mm, mm}, {mm, mm}}, 2.0 * (double)(mm * mm * mm), 1, 0, REF_GEMM},
      {"conv2d-fwd", "conv2d-fwd", b_conv, 2, {4, 4}, {{cb, cc, hw, hw}, {cc, cc, 3, 3}}, conv, 1, 0, REF_NONE},
      {"conv2d-fwd-bwd",
       "conv2d-fwd-bwd",
       b_conv,
       2,
       {4, 4},
       {{cb, cc, hw, hw}, {cc, cc, 3, 3}},
       3 * conv,
       1,
       1,
       REF_NONE},
  };
  bench_print_header(run->log, "kernels");
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
    const kernel *k = &ks[i];
    if (!bench_wanted(run, k->name)) continue;
    double elems = (double)k->shape[0][0] * (k->rank[0] > 1 ? (double)k->shape[0][1] : 1) *
                   (k->rank[0] > 2 ? (double)(k->shape[0][2] * k->shape[0][3]) : 1);
    bench_op op;
    if (!bench_op_init(run, &op, dev, k->name, k->fn, k->nin, k->rank, k->shape, k->backward)) continue;
    /* parity's op, its C references and torch's op, repetitions interleaved */
    bench_job jobs[4] = {bench_op_job(&op)};
    bench_loop loops[2] = {{0}, {0}};
    int nloops = k->ref == REF_READ ? 1 : k->ref == REF_ADD ? 2 : 0, ok = 1;
    for (int l = 0; l < nloops && ok; l++) {
      ok = bench_loop_init(&loops[l], (size_t)elems, k->ref == REF_READ ? LOOP_READ : l ? LOOP_TRIAD : LOOP_ADD);
      jobs[1 + l] = bench_loop_job(&loops[l]);
    }
    char why[200] = "";
    blas_gemm *gemm = NULL;
    if (k->ref == REF_GEMM && (gemm = blas_gemm_create((int)mm, (int)mm, (int)mm, run->threads, why, sizeof why)))
      jobs[1] = blas_gemm_job(gemm);
    int njobs = ok ? 1 + nloops + (gemm != NULL) : 1;
    torch_ref torch;
    torch_ref_job(&torch, &jobs[njobs], k->torch, k->rank[0], k->shape[0], k->nin > 1 ? k->rank[1] : 0, k->shape[1]);
    bench_time_figure(run, jobs, njobs, &torch);
    bench_op_release(&op);
    for (int l = 0; l < nloops; l++) bench_loop_release(&loops[l]);
    blas_gemm_destroy(gemm);
    if (jobs[0].seconds <= 0) {
      fprintf(run->log, "  %-16s unsupported: %s\n", k->name, parity_last_error());
      continue;
    }
    char shape[64];
    shape_text(shape, sizeof shape, k);
    bench_figure *f = bench_add(run->results, "kernels", k->name, backend, shape, elems, run->threads,
                                k->work / jobs[0].seconds / 1e9, k->flops ? "GFLOP/s" : "GB/s");
    if (!f) return;
    f->work = k->work;
    f->spread = jobs[0].spread;
    if (!ok) bench_ref_missing(f, nloops == 1 ? "read loop" : "STREAM add", "out of memory");
    for (int l = 0; l < nloops && ok; l++)
      bench_ref_value(f,
                      loops[l].kind == LOOP_READ  ? "read loop"
                      : loops[l].kind == LOOP_ADD ? "STREAM add"
                                                  : "STREAM triad",
                      bench_loop_bytes(&loops[l]) / jobs[1 + l].seconds / 1e9);
    if (gemm)
      bench_ref_value(f, "OpenBLAS sgemm", k->work / jobs[1].seconds / 1e9);
    else if (k->ref == REF_GEMM)
      bench_ref_missing(f, "OpenBLAS sgemm", why);
    torch_ref_attach(&torch, f);
    bench_print_row(run->log, f);
  }
}
