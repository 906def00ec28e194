/* conv.c — conv2d (NCHW; stride, padding, dilation, groups) forward and backward, and max/avg
 * pooling forward and backward (plugins/kernels/conv.k.h). GPU layout: conv2d forward, backward data and
 * backward weight run as implicit GEMMs in CT x CT local-memory tiles (conv_tile_*), where the
 * device allows work-groups of CT * CT; else, and for pooling and the bias gradient, a work-item
 * per output. */
#include <string.h>

#include "cl_internal.h"
#include "parity_support/geom_conv.h"

/* the kernels' cv_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_cv_t ocl_cv_t;

static int is_pool(const parity_op_desc_t *d) { return d->op != PARITY_OP_CONV2D; }

#define CT 16 /* conv_tiled.k.h: tile edge of the conv_tile_* kernels (work-groups of CT x CT) */

static uint64_t ceil_div(int64_t a, int64_t b) { return (uint64_t)((a + b - 1) / b); }

/* Launch tiled kernel kid over `tiles` tiles (work-groups loop over the rest), setting *ran; leaves
 * *ran 0 (nothing launched, the caller runs the per-output kernel) when the device or the kernel
 * does not allow work-groups of CT x CT. */
static int32_t tile_run(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint64_t tiles, uint64_t work,
                        uint32_t nargs, const ocl_arg_t *args, int *ran) {
  *ran = 0;
  if (dev->max_local < CT * CT) return PARITY_STATUS_OK;
  cl_kernel kern;
  int32_t st = ocl_kernel(dev, v, kid, work, &kern);
  if (st != PARITY_STATUS_OK) return st;
  size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kern, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) != CL_SUCCESS ||
      wg < CT * CT)
    return PARITY_STATUS_OK;
  *ran = 1;
  if (tiles == 0) return PARITY_STATUS_OK;
  uint64_t groups = tiles < dev->max_groups ? tiles : dev->max_groups;
  size_t global[2] = {(size_t)groups * CT, CT}, local[2] = {CT, CT};
  return ocl_run(dev, v, kid, 2, global, local, nargs, args);
}

/* The kernels' copy of the geometry (parity_support/geom_conv.h); operand strides are added by
 * the caller. */
static void cv_init(ocl_cv_t *c, const parity_op_desc_t *d) {
  psup_conv_plan_t g;
  psup_conv_plan(&g, d);
  memset(c, 0, sizeof *c);
  c->N = g.N, c->C = g.C, c->H = g.H, c->W = g.W;
  c->O = g.O, c->KH = g.KH, c->KW = g.KW, c->OH = g.OH, c->OW = g.OW;
  c->sh = g.sh, c->sw = g.sw, c->pt = g.pt, c->pl = g.pl, c->dh = g.dh, c->dw = g.dw, c->groups = g.groups;
  c->include_pad = g.include_pad;
  c->op = d->op;
  c->dt = d->inputs[0]->dtype;
}

int32_t ocl_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  ocl_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (n == 0) return PARITY_STATUS_OK;
  psup_conv_operand(x, c.xs, &c.xb);
  psup_conv_operand(y, c.ys, &c.yb);
  cl_mem mx = ocl_mem_of(x), my = ocl_mem_of(y);
  int cls = ocl_class_of(c.dt);
  uint64_t taps = (uint64_t)c.KH * (uint64_t)c.KW, work = (uint64_t)n * taps * (uint64_t)(c.C / c.groups);
  if (is_pool(d)) {
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(my)};
    return ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_pool_fwd, n, (uint64_t)n * taps, 3, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *bias = d->inputs[2];
  psup_conv_operand(w, c.ws, &c.wb);
  if (bias) c.bs = bias->strides[0], c.bb = psup_elem_base(bias);
  cl_mem mw = ocl_mem_of(w), mb = ocl_mem_of(bias);
  ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(mw), OCL_ARG(mb), OCL_ARG(my)};
  if (dev->contiguous) { /* CPU devices: blocks of 4 output channels x 8 (f64: 4) columns */
    int64_t lanes = c.dt == PARITY_DTYPE_F64 ? 4 : 8, og = c.O / c.groups;
    int64_t items = c.N * c.OH * c.groups * ((og + 3) / 4) * ((c.OW + lanes - 1) / lanes);
    return ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_fwd_blk, items, work, 5, args);
  }
  if (!dev->contiguous) { /* GPU layout: tiles of CT output channels x CT (n, oh, ow) positions */
    int64_t og = c.O / c.groups;
    uint64_t tiles = (uint64_t)c.groups * ceil_div(og, CT) * ceil_div(c.N * c.OH * c.OW, CT);
    int ran;
    int32_t st = tile_run(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_tile_fwd, tiles, work, 5, args, &ran);
    if (st != PARITY_STATUS_OK || ran) return st;
  }
  return ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_fwd, n, work, 5, args);
}

int32_t ocl_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  ocl_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *dx = d->outputs[0];
  int cls = ocl_class_of(c.dt);
  psup_conv_operand(x, c.xs, &c.xb);
  psup_conv_operand(dx, c.gxs, &c.gxb);
  cl_mem mx = ocl_mem_of(x), mdx = ocl_mem_of(dx);
  int64_t nx = psup_numel(x);
  uint64_t taps = (uint64_t)c.KH * (uint64_t)c.KW;
  if (is_pool(d)) {
    const parity_tensor_desc_t *y = d->inputs[1], *dy = d->inputs[2];
    if (!dx || nx == 0) return PARITY_STATUS_OK;
    psup_conv_operand(y, c.ys, &c.yb);
    psup_conv_operand(dy, c.gys, &c.gyb);
    cl_mem my = ocl_mem_of(y), mdy = ocl_mem_of(dy);
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(my), OCL_ARG(mdy), OCL_ARG(mdx)};
    return ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_pool_bwd, nx, (uint64_t)nx * taps, 5, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *dy = d->inputs[2], *dw = d->outputs[1], *db = d->outputs[2];
  psup_conv_operand(w, c.ws, &c.wb);
  psup_conv_operand(dy, c.ys, &c.yb);
  psup_conv_operand(dw, c.gws, &c.gwb);
  if (db) c.gbs = db->strides[0], c.gbb = psup_elem_base(db);
  cl_mem mw = ocl_mem_of(w), mdy = ocl_mem_of(dy), mdw = ocl_mem_of(dw), mdb = ocl_mem_of(db);
  int32_t st = PARITY_STATUS_OK;
  if (dx && nx > 0) {
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mw), OCL_ARG(mdy), OCL_ARG(mdx)};
    uint64_t work = (uint64_t)nx * taps * (uint64_t)(c.O / c.groups);
    int ran = 0;
    if (dev->contiguous) { /* CPU devices: blocks of 4 input channels x 8 (f64: 4) columns */
      int64_t lanes = c.dt == PARITY_DTYPE_F64 ? 4 : 8, cg = c.C / c.groups;
      int64_t items = c.N * c.H * c.groups * ((cg + 3) / 4) * ((c.W + lanes - 1) / lanes);
      st = ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_bwd_data_blk, items, work, 4, args);
      ran = 1;
    } else { /* tiles of CT input channels x CT (n, h, w) positions */
      st = tile_run(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_tile_bwd_data,
                    (uint64_t)c.groups * ceil_div(c.C / c.groups, CT) * ceil_div(c.N * c.H * c.W, CT), work,
                    4, args, &ran);
    }
    if (st == PARITY_STATUS_OK && !ran)
      st = ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_bwd_data, nx, work, 4, args);
  }
  int64_t nw = dw ? psup_numel(dw) : 0;
  if (st == PARITY_STATUS_OK && nw > 0) {
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(mdy), OCL_ARG(mdw)};
    uint64_t work = (uint64_t)nw * (uint64_t)c.N * (uint64_t)c.OH * (uint64_t)c.OW;
    int ran = 0;
    if (dev->contiguous) { /* CPU devices: blocks of 4 output channels of one tap */
      int64_t items = c.groups * ((c.O / c.groups + 3) / 4) * (c.C / c.groups) * c.KH * c.KW;
      st = ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_bwd_weight_blk, items, work, 4, args);
      ran = 1;
    } else { /* tiles of CT output channels x CT (c, kh, kw) taps */
      st = tile_run(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_tile_bwd_weight,
                    (uint64_t)c.groups * ceil_div(c.O / c.groups, CT) * ceil_div(c.C / c.groups * c.KH * c.KW, CT),
                    work, 4, args, &ran);
    }
    if (st == PARITY_STATUS_OK && !ran)
      st = ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_bwd_weight, nw, work, 4, args);
  }
  if (st == PARITY_STATUS_OK && db && c.O > 0) {
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mdy), OCL_ARG(mdb)};
    st = ocl_run_items(dev, OCL_VAR(cls, c.op, c.dt, 0), OCL_K_conv_bwd_bias, c.O, (uint64_t)psup_numel(dy), 3, args);
  }
  return st;
}
