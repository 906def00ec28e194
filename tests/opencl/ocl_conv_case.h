/* ocl_conv_case.h — a conv2d geometry and the test case it makes (x in NHWC storage, every
 * backward output), shared by test_conv.c and test_gpu_layout.c. */
#ifndef PARITY_OCL_CONV_CASE_H
#define PARITY_OCL_CONV_CASE_H

#include "ocl_test.h"

typedef struct geom {
  int64_t n, c, h, w, o, kh, kw;
  int32_t sh, sw, pt, pb, pl, pr, dh, dw, groups;
} geom;

static inline int64_t out_size(int64_t in, int32_t p0, int32_t p1, int64_t k, int32_t d, int32_t s) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

static inline parity_op_params_t params_of(const geom *g) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.conv2d.stride[0] = g->sh, p.conv2d.stride[1] = g->sw;
  p.conv2d.padding[0] = g->pt, p.conv2d.padding[1] = g->pb, p.conv2d.padding[2] = g->pl, p.conv2d.padding[3] = g->pr;
  p.conv2d.dilation[0] = g->dh, p.conv2d.dilation[1] = g->dw;
  p.conv2d.groups = g->groups;
  p.conv2d.kernel[0] = (int32_t)g->kh, p.conv2d.kernel[1] = (int32_t)g->kw;
  return p;
}

static inline ot_case conv_case(int32_t dt, const geom *g, int dir, int bias) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = "conv2d";
  c.op = PARITY_OP_CONV2D;
  c.direction = dir;
  c.params = params_of(g);
  int64_t oh = out_size(g->h, g->pt, g->pb, g->kh, g->dh, g->sh),
          ow = out_size(g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
  int64_t xs[4] = {g->n, g->c, g->h, g->w}, ws[4] = {g->o, g->c / g->groups, g->kh, g->kw};
  int64_t ys[4] = {g->n, g->o, oh, ow}, bs[1] = {g->o};
  int64_t xst[4] = {g->c * g->h * g->w, 1, g->w * g->c, g->c}; /* NHWC storage */
  ot_view x = ot_strided(dt, 4, xs, xst, 3), w = ot_contig(dt, 4, ws), y = ot_contig(dt, 4, ys);
  ot_view b = ot_contig(dt, 1, bs);
  c.lo = -1, c.hi = 1;
  c.k = (g->c / g->groups) * g->kh * g->kw + 1;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 3, c.nout = 1;
    c.in[0] = x, c.in[1] = w, c.out[0] = y;
    if (bias) c.in[2] = b;
  } else {
    c.nin = 3, c.nout = 3;
    c.in[0] = x, c.in[1] = w, c.in[2] = y;
    c.out[0] = ot_contig(dt, 4, xs), c.out[1] = w;
    if (bias) c.out[2] = b;
    int64_t kw_terms = g->n * oh * ow, kx = (g->o / g->groups) * g->kh * g->kw;
    c.k = kw_terms > kx ? kw_terms : kx;
  }
  return c;
}

#endif
