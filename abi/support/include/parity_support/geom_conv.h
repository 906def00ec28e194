/* geom_conv.h — the geometry of conv2d and max/avg pooling (NCHW) that the GPU plugins hand to
 * their kernels: sizes, output extents, stride, top/left padding, dilation, groups; and an
 * operand's four strides with its element base. Each plugin copies the plan into the parameter
 * struct its kernels mirror. */
#ifndef PARITY_SUPPORT_GEOM_CONV_H
#define PARITY_SUPPORT_GEOM_CONV_H

#include <stdint.h>

#include "parity_plugin.h"

typedef struct psup_conv_plan_t {
  int64_t N, C, H, W; /* x */
  int64_t O, KH, KW;  /* output channels and window (pooling: O = C, groups = 1) */
  int64_t OH, OW;     /* output extents (psup_conv_out_extent) */
  int32_t sh, sw, pt, pl, dh, dw, groups;
  int32_t include_pad; /* avg pooling counts padding */
  int32_t pool;        /* 1 for the pooling ops, 0 for conv2d */
} psup_conv_plan_t;

/* The geometry of a conv2d or pooling op (forward or backward) from its descriptor. */
void psup_conv_plan(psup_conv_plan_t *g, const parity_op_desc_t *d);
/* An NCHW operand's strides into s[4] and its element base into *base; nothing for NULL. */
void psup_conv_operand(const parity_tensor_desc_t *t, int64_t *s, int64_t *base);

#endif
