/* layout.h — the iteration geometry every backend launches elementwise work over: one shared
 * shape and one stride list per operand, with size-1 axes dropped and axes that are contiguous
 * for every operand merged. Plugins hand the result to their kernels (OpenCL, Vulkan, CUDA). */
#ifndef PARITY_SUPPORT_LAYOUT_H
#define PARITY_SUPPORT_LAYOUT_H

#include <stdint.h>

#include "parity_plugin.h"

#define PSUP_LAYOUT_MAX_OPS 6

typedef struct psup_layout_t {
  uint32_t rank; /* >= 1 after psup_layout_build */
  uint32_t nops;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[PSUP_LAYOUT_MAX_OPS][PARITY_MAX_RANK]; /* elements */
  int64_t base[PSUP_LAYOUT_MAX_OPS];                     /* element offset of element 0 */
} psup_layout_t;

/* Iterate `shape` with one stride list per operand (NULL: operand absent, strides 0). With
 * short_inner_swap, a short innermost axis (< 64) is swapped with the longest one, which only
 * reorders independent elements. */
void psup_layout_build(psup_layout_t *l, uint32_t rank, const int64_t *shape, uint32_t nops,
                       const int64_t *const *strides, const int64_t *bases, int short_inner_swap);
/* The same from tensor descriptors sharing the first present one's shape (NULL: absent);
 * bases are offset_bytes / element size. */
void psup_layout_from_tensors(psup_layout_t *l, uint32_t nops, const parity_tensor_desc_t *const *t,
                              int short_inner_swap);

/* A cast that is a plain copy of bytes: the same dtype on both sides, one of f32, f64, i32, i64
 * (bool's kernel stores 0/1 canonically, and f16/bf16 kernels quiet a signalling NaN), both
 * operands dense with unit strides once axes are merged, offsets whole elements, and x's bytes not
 * overlapping y's in one buffer. Then 1, with the byte ranges: a plugin copies them with its
 * driver's buffer copy (clEnqueueCopyBuffer, vkCmdCopyBuffer), bit for bit what its cast kernel
 * writes, with no kernel to launch (the core copies gradients this way). Else 0: the kernel. */
int psup_cast_is_copy(const parity_tensor_desc_t *x, const parity_tensor_desc_t *y, uint64_t *src_off,
                      uint64_t *dst_off, uint64_t *bytes);
/* add's backward as copies: da = db = dc, each output present a plain copy of dc's bytes (f32 or
 * f64, every operand dense once axes are merged, none broadcast, offsets whole elements, no output
 * overlapping dc in one buffer). Then 1, with dc's byte range (*src_off, *bytes) and each output's
 * offset in dst_off (an absent output's is 0). Else 0: the kernel. */
int psup_add_grad_is_copy(const parity_op_desc_t *d, uint64_t *src_off, uint64_t dst_off[2], uint64_t *bytes);

#endif
