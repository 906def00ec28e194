/* scaling.c — the scaling section: parity's sum and add of f32 arrays of 2^lo ... 2^hi elements
 * (GB/s: 4n bytes for sum, 12n for add) beside a vectorised C read loop (for sum) and STREAM's add
 * and triad (for add) of the same size, measured in the same run, and torch.sum / torch.add. */
#include <stdio.h>

#include "sections.h"

static parity_status_t s_sum(parity_tensor_t **in, parity_tensor_t **out) { return parity_reduce(PARITY_OP_SUM, in[0], 0, 0, out); }
static parity_status_t s_add(parity_tensor_t **in, parity_tensor_t **out) { return parity_binary(PARITY_OP_ADD, in[0], in[1], out); }

void section_scaling(bench_run *run, parity_device_t *dev, const char *backend) {
  const bench_options *o = run->o;
  bench_print_header(run->log, "scaling");
  for (int l = o->lo; l <= o->hi; l += o->step) {
    int64_t n = 1ll << l;
    const int rank[2] = {1, 1};
    const int64_t shape[2][4] = {{n}, {n}};
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)n);
    for (int add = 0; add < 2; add++) {
      const char *name = add ? "add" : "sum";
      if (!bench_wanted(run, name)) continue;
      double s = bench_parity_op(run, dev, name, add ? s_add : s_sum, add ? 2 : 1, rank, shape, 0);
      if (s <= 0) continue;
      double work = (add ? 12.0 : 4.0) * (double)n;
      bench_figure *f = bench_add(run->results, "scaling", name, backend, text, (double)n, run->threads, work / s / 1e9, "GB/s");
      if (!f) return;
      f->work = work;
      if (add) {
        bench_ref_value(f, "STREAM add", bench_ref_add_gbs(run, (size_t)n));
        bench_ref_value(f, "STREAM triad", bench_ref_triad_gbs(run, (size_t)n));
      } else {
        bench_ref_value(f, "read loop", bench_ref_read_gbs(run, (size_t)n));
      }
      torch_ref_measure(f, name, 1, shape[0], add, shape[1]);
      bench_print_row(run->log, f);
    }
  }
}
