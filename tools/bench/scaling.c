/* scaling.c — the scaling section: parity's sum, max, argmax and add of f32 arrays of 2^lo ... 2^hi
 * elements (GB/s: 4n bytes for the reductions, 12n for add) beside a vectorised C read loop (for the
 * reductions) and STREAM's add and triad (for add) of the same size, measured in the same run, and
 * torch's sum, amax, argmax and add.
 * "sum-replayed" is the same sum recorded once as a plan and replayed: the kernel without the
 * eager op's host work (about 0.2 us per op on the CPU plugin, most of a sum below 2^16). */
#include <stdio.h>

#include "sections.h"

static parity_status_t s_sum(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_SUM, in[0], 0, 0, out);
}
static parity_status_t s_max(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_MAX, in[0], 0, 0, out);
}
static parity_status_t s_argmax(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_reduce(PARITY_OP_ARGMAX, in[0], 0, 0, out);
}
static parity_status_t s_add(parity_tensor_t **in, parity_tensor_t **out) {
  return parity_binary(PARITY_OP_ADD, in[0], in[1], out);
}

void section_scaling(bench_run *run, parity_device_t *dev, const char *backend) {
  const bench_options *o = run->o;
  bench_print_header(run->log, "scaling");
  for (int l = o->lo; l <= o->hi; l += o->step) {
    int64_t n = 1ll << l;
    const int rank[2] = {1, 1};
    const int64_t shape[2][4] = {{n}, {n}};
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)n);
    static const struct {
      const char *name;
      bench_op_fn fn;
    } kinds[] = {{"sum", s_sum}, {"sum-replayed", s_sum}, {"max", s_max}, {"argmax", s_argmax}, {"add", s_add}};
    for (size_t kind = 0; kind < sizeof kinds / sizeof *kinds; kind++) {
      const char *name = kinds[kind].name;
      const int add = kinds[kind].fn == s_add, replay = kind == 1;
      if (!bench_wanted(run, name)) continue;
      bench_op op;
      if (!bench_op_init(run, &op, dev, name, kinds[kind].fn, add ? 2 : 1, rank, shape, 0)) continue;
      if (replay && !bench_op_prepare(run, &op, name)) {
        run->failures++;
        bench_op_release(&op);
        continue;
      }
      bench_loop loops[2] = {{0}, {0}};
      bench_job jobs[4] = {replay ? bench_plan_job(&op) : bench_op_job(&op)};
      int nloops = add ? 2 : 1, ok = 1;
      for (int l = 0; l < nloops && ok; l++) {
        ok = bench_loop_init(&loops[l], (size_t)n, add ? (l ? LOOP_TRIAD : LOOP_ADD) : LOOP_READ);
        jobs[1 + l] = bench_loop_job(&loops[l]);
      }
      const int njobs = ok ? 1 + nloops : 1;
      torch_ref torch = {.id = -1}; /* torch's op, not beside the replayed sum */
      if (!replay) torch_ref_job(&torch, &jobs[njobs], name, 1, shape[0], add, shape[1]);
      bench_time_figure(run, jobs, njobs, &torch);
      bench_op_release(&op);
      for (int l = 0; l < nloops; l++) bench_loop_release(&loops[l]);
      if (jobs[0].seconds <= 0) {
        fprintf(run->log, "  %-16s unsupported: %s\n", name, parity_last_error());
        continue;
      }
      double work = (add ? 12.0 : 4.0) * (double)n;
      bench_figure *f = bench_add(run->results, "scaling", name, backend, text, (double)n, run->threads,
                                  work / jobs[0].seconds / 1e9, "GB/s");
      if (!f) return;
      f->work = work;
      f->spread = jobs[0].spread;
      if (!ok) bench_ref_missing(f, add ? "STREAM add" : "read loop", "out of memory");
      for (int l = 0; l < nloops && ok; l++)
        bench_ref_value(f, add ? (l ? "STREAM triad" : "STREAM add") : "read loop", work / jobs[1 + l].seconds / 1e9);
      if (!replay) torch_ref_attach(&torch, f);
      bench_print_row(run->log, f);
    }
  }
}
