/* kp_matmul.c — matmul's kernel struct (kp_host.h) for each product of parity_support/geom_matmul.h. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/geom_matmul.h"

/* The struct of product `which` of d and its operands a, b, c; 0 when it has no output. */
static int mm_pack(kp_mm_t *p, const parity_tensor_desc_t *t[3], const parity_op_desc_t *d, int which) {
  psup_matmul_plan_t q;
  if (!psup_matmul_plan(&q, d, which)) return 0;
  memset(p, 0, sizeof *p);
  memcpy(p->bshape, q.batch.shape, sizeof p->bshape);
  memcpy(p->bstride, q.batch.strides, sizeof p->bstride);
  memcpy(p->base, q.base, sizeof p->base);
  p->M = q.M, p->N = q.N, p->K = q.K, p->batch = q.count;
  p->am = q.am, p->ak = q.ak, p->bk = q.bk, p->bn = q.bn, p->cm = q.cm, p->cn = q.cn;
  p->brank = q.batch.rank;
  p->dt = q.t[2]->dtype;
  for (int k = 0; k < 3; k++) t[k] = q.t[k];
  return 1;
}

int32_t kp_mm_run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward, kp_mm_launch_t launch) {
  static const int products[2][2] = {{PSUP_MM_FORWARD, -1}, {PSUP_MM_GRAD_A, PSUP_MM_GRAD_B}};
  for (int i = 0; i < 2 && products[backward][i] >= 0; i++) {
    kp_mm_t p;
    const parity_tensor_desc_t *t[3];
    if (!mm_pack(&p, t, d, products[backward][i])) continue;
    int32_t st = launch(dev, &p, t);
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

uint64_t kp_mm_tiles(const kp_mm_t *p, int64_t edge) {
  return (uint64_t)p->batch * (uint64_t)((p->M + edge - 1) / edge) * (uint64_t)((p->N + edge - 1) / edge);
}
