/* conv.c — the CONV2D family's entries: conv2d (NCHW; stride, padding, dilation, groups) forward
 * and backward (plugins/kernels/conv.k.h); max/avg pooling, the family's other ops, goes to pool.c.
 * The struct and each kernel's items: kp_cv_pack_forward / kp_cv_pack_backward (kp_host.h). CPU
 * devices: register blocks (conv_*_blk). GPU layout: forward, backward data and backward weight
 * run as implicit GEMMs in CT x CT local-memory tiles (conv_tile_*), where the device allows
 * work-groups of CT * CT; else, and for the bias gradient, a work-item per output. */
#include "cl_internal.h"
#include "kp_host.h"

#define CT KP_CONV_TILE /* tile edge of the conv_tile_* kernels (kernel_params.h) */

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

/* The layout's kernel for one conv2d pass: register blocks of `blk_items` on CPU devices, else
 * `tiles` CT x CT tiles where allowed, else a work-item per item. */
static int32_t conv_pass(parity_plugin_device_t *dev, ocl_var_t v, const int kids[3], int64_t blk_items, uint64_t tiles,
                         int64_t items, uint64_t work, uint32_t nargs, const ocl_arg_t *args) {
  if (dev->contiguous) return ocl_run_items(dev, v, kids[0], blk_items, work, nargs, args);
  int ran;
  int32_t st = tile_run(dev, v, kids[1], tiles, work, nargs, args, &ran);
  if (st != PARITY_STATUS_OK || ran) return st;
  return ocl_run_items(dev, v, kids[2], items, work, nargs, args);
}

int32_t ocl_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (d->op != PARITY_OP_CONV2D) return ocl_pool2d_forward(dev, d);
  kp_cv_t c;
  int64_t n = kp_cv_pack_forward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  cl_mem mx = ocl_mem_of(d->inputs[0]), my = ocl_mem_of(d->outputs[0]);
  ocl_var_t v = OCL_VAR(ocl_class_of(c.dt), c.op, c.dt, 0);
  uint64_t taps = (uint64_t)c.KH * (uint64_t)c.KW, work = (uint64_t)n * taps * (uint64_t)(c.C / c.groups);
  cl_mem mw = ocl_mem_of(d->inputs[1]), mb = ocl_mem_of(d->inputs[2]);
  ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(mw), OCL_ARG(mb), OCL_ARG(my)};
  /* blocks of 4 output channels x 8 (f64: 4) columns; tiles of CT output channels x CT (n, oh, ow) */
  int64_t lanes = c.dt == PARITY_DTYPE_F64 ? 4 : 8, og = c.O / c.groups;
  int64_t blk = c.N * c.OH * c.groups * ((og + 3) / 4) * ((c.OW + lanes - 1) / lanes);
  uint64_t tiles = (uint64_t)c.groups * ceil_div(og, CT) * ceil_div(c.N * c.OH * c.OW, CT);
  static const int kids[3] = {OCL_K_conv_fwd_blk, OCL_K_conv_tile_fwd, OCL_K_conv_fwd};
  return conv_pass(dev, v, kids, blk, tiles, n, work, 5, args);
}

int32_t ocl_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (d->op != PARITY_OP_CONV2D) return ocl_pool2d_backward(dev, d);
  kp_cv_t c;
  int64_t items[3];
  kp_cv_pack_backward(&c, items, d);
  ocl_var_t v = OCL_VAR(ocl_class_of(c.dt), c.op, c.dt, 0);
  /* in x, w, dy; out dx, dw, db */
  cl_mem mx = ocl_mem_of(d->inputs[0]), mw = ocl_mem_of(d->inputs[1]), mdy = ocl_mem_of(d->inputs[2]);
  cl_mem mdx = ocl_mem_of(d->outputs[0]), mdw = ocl_mem_of(d->outputs[1]), mdb = ocl_mem_of(d->outputs[2]);
  uint64_t taps = (uint64_t)c.KH * (uint64_t)c.KW;
  int64_t lanes = c.dt == PARITY_DTYPE_F64 ? 4 : 8, cg = c.C / c.groups, og = c.O / c.groups;
  int32_t st = PARITY_STATUS_OK;
  if (items[0] > 0) { /* blocks of 4 input channels x 8 (f64: 4) columns; tiles of CT input channels x CT (n, h, w) */
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mw), OCL_ARG(mdy), OCL_ARG(mdx)};
    static const int kids[3] = {OCL_K_conv_bwd_data_blk, OCL_K_conv_tile_bwd_data, OCL_K_conv_bwd_data};
    st = conv_pass(dev, v, kids, c.N * c.H * c.groups * ((cg + 3) / 4) * ((c.W + lanes - 1) / lanes),
                   (uint64_t)c.groups * ceil_div(cg, CT) * ceil_div(c.N * c.H * c.W, CT), items[0],
                   (uint64_t)items[0] * taps * (uint64_t)og, 4, args);
  }
  if (st == PARITY_STATUS_OK &&
      items[1] > 0) { /* blocks of 4 output channels of one tap; tiles of CT output channels x CT (c, kh, kw) */
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(mdy), OCL_ARG(mdw)};
    static const int kids[3] = {OCL_K_conv_bwd_weight_blk, OCL_K_conv_tile_bwd_weight, OCL_K_conv_bwd_weight};
    st = conv_pass(dev, v, kids, c.groups * ((og + 3) / 4) * cg * c.KH * c.KW,
                   (uint64_t)c.groups * ceil_div(og, CT) * ceil_div(cg * c.KH * c.KW, CT), items[1],
                   (uint64_t)items[1] * (uint64_t)c.N * (uint64_t)c.OH * (uint64_t)c.OW, 4, args);
  }
  if (st == PARITY_STATUS_OK && items[2] > 0) {
    ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mdy), OCL_ARG(mdb)};
    st = ocl_run_items(dev, v, OCL_K_conv_bwd_bias, items[2], (uint64_t)psup_numel(d->inputs[2]), 3, args);
  }
  return st;
}
