/* tensor.h — tensors, views, ops and autodiff (included by parity.h).
 *
 * OWNERSHIP
 *   Every function that hands out a parity_tensor_t* gives the caller one reference; release it
 *   with parity_tensor_release(). Views share storage with their base (reference-counted).
 *   parity_tensor_grad() returns a borrowed pointer valid until the next backward/zero_grad.
 *
 * AUTODIFF
 *   A tensor with requires_grad set, and every float tensor computed from one while grad mode is
 *   on, records the op that made it. parity_backward(loss, seed) walks that graph in reverse,
 *   accumulating into the .grad of every leaf that requires grad (across calls, until
 *   parity_tensor_zero_grad). Broadcast gradients are summed back to each input's shape.
 *   Comparisons, argmax/argmin, and bool or integer tensors never carry gradients: their values
 *   are computed on plain values, identical with or without a gradient being taken.
 *
 * ERRORS
 *   Shape, dtype and device mistakes return a status with a message naming the op and the shapes;
 *   inputs are never modified by a failing call and *out is left NULL.
 */
#ifndef PARITY_TENSOR_H
#define PARITY_TENSOR_H

#include "parity/parity.h" /* the types; parity.h includes this header too */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parity_tensor_t parity_tensor_t;

/* ---- creation --------------------------------------------------------------------------- */
/* Copy `data` (contiguous, row-major, elements of `dtype`) to a new tensor on `dev`. */
PARITY_API parity_status_t parity_tensor_from_host(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                                   const int64_t *shape, const void *data, parity_tensor_t **out);
/* Same, from doubles converted with the cast rules of docs/semantics.md. */
PARITY_API parity_status_t parity_tensor_from_f64(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                                  const int64_t *shape, const double *data, parity_tensor_t **out);
PARITY_API parity_status_t parity_tensor_full(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                              const int64_t *shape, double value, parity_tensor_t **out);
PARITY_API parity_status_t parity_tensor_zeros(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                               const int64_t *shape, parity_tensor_t **out);
PARITY_API parity_status_t parity_tensor_ones(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                              const int64_t *shape, parity_tensor_t **out);
/* 1-D [start, start+step, ...) below stop (above stop for a negative step). */
PARITY_API parity_status_t parity_tensor_arange(parity_device_t *dev, parity_dtype_t dtype, double start, double stop,
                                                double step, parity_tensor_t **out);
/* Counter-based (Philox4x32-10) random numbers: the same (seed, offset) gives the same values
 * on every backend. `offset` selects the stream position, so successive calls can use
 * offset += numel. */
PARITY_API parity_status_t parity_tensor_rand_uniform(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                                      const int64_t *shape, double low, double high, uint64_t seed,
                                                      uint64_t offset, parity_tensor_t **out);
PARITY_API parity_status_t parity_tensor_rand_normal(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                                     const int64_t *shape, double mean, double stddev, uint64_t seed,
                                                     uint64_t offset, parity_tensor_t **out);

PARITY_API parity_tensor_t *parity_tensor_retain(parity_tensor_t *t);
PARITY_API void parity_tensor_release(parity_tensor_t *t);

/* ---- data and queries --------------------------------------------------------------------- */
/* Copy all elements, row-major, in the tensor's dtype into dst (dst_bytes must be enough). */
PARITY_API parity_status_t parity_tensor_to_host(const parity_tensor_t *t, void *dst, uint64_t dst_bytes);
/* The value of a one-element tensor (any shape with one element), as a double. */
PARITY_API parity_status_t parity_tensor_item(const parity_tensor_t *t, double *out);
/* Copy all elements converted to double into dst (count must be >= numel). */
PARITY_API parity_status_t parity_tensor_to_f64(const parity_tensor_t *t, double *dst, uint64_t count);
/* Overwrite the tensor's elements in place from contiguous host data of its dtype (used to feed
 * new inputs to a captured plan). */
PARITY_API parity_status_t parity_tensor_write(parity_tensor_t *t, const void *src, uint64_t src_bytes);
/* Accessors. Given NULL they answer a neutral value and set no error: dtype PARITY_DTYPE_INVALID,
 * rank, dim and numel 0, shape, strides and device NULL, is_contiguous and shares_storage 0. */
PARITY_API parity_dtype_t parity_tensor_dtype(const parity_tensor_t *t);
PARITY_API uint32_t parity_tensor_rank(const parity_tensor_t *t);
PARITY_API int64_t parity_tensor_dim(const parity_tensor_t *t, int32_t axis);
PARITY_API const int64_t *parity_tensor_shape(const parity_tensor_t *t);
PARITY_API const int64_t *parity_tensor_strides(const parity_tensor_t *t);
PARITY_API int64_t parity_tensor_numel(const parity_tensor_t *t);
PARITY_API parity_device_t *parity_tensor_device(const parity_tensor_t *t);
PARITY_API int parity_tensor_is_contiguous(const parity_tensor_t *t);
/* 1 when both tensors view the same storage. */
PARITY_API int parity_tensor_shares_storage(const parity_tensor_t *a, const parity_tensor_t *b);

/* ---- views (share storage; differentiable) ---------------------------------------------------
 * Every function that takes an axis takes it in [-rank, rank): negative axes count from the end
 * (-1 = last); out of range is INVALID_ARGUMENT with the valid range in the message. */
PARITY_API parity_status_t parity_reshape(parity_tensor_t *x, uint32_t rank, const int64_t *shape,
                                          parity_tensor_t **out); /* one -1 allowed; copies when
                                                                     the view is impossible */
PARITY_API parity_status_t parity_permute(parity_tensor_t *x, const int32_t *axes, parity_tensor_t **out);
PARITY_API parity_status_t parity_transpose(parity_tensor_t *x, int32_t axis0, int32_t axis1, parity_tensor_t **out);
/* Elements start, start+step, ... below stop on `axis` (step >= 1; stop clamped to the size). */
PARITY_API parity_status_t parity_slice(parity_tensor_t *x, int32_t axis, int64_t start, int64_t stop, int64_t step,
                                        parity_tensor_t **out);
/* Broadcast size-1 axes (and new leading axes) to `shape` with zero strides. */
PARITY_API parity_status_t parity_expand(parity_tensor_t *x, uint32_t rank, const int64_t *shape,
                                         parity_tensor_t **out);
PARITY_API parity_status_t parity_squeeze(parity_tensor_t *x, int32_t axis, parity_tensor_t **out);
/* A new size-1 axis at position `axis` of the result (-1 = a new last axis). */
PARITY_API parity_status_t parity_unsqueeze(parity_tensor_t *x, int32_t axis, parity_tensor_t **out);
/* A contiguous tensor with the same values (a view of x, no copy, when already so). */
PARITY_API parity_status_t parity_contiguous(parity_tensor_t *x, parity_tensor_t **out);

/* ---- ops (every op of the five kernel families) ---------------------------------------------
 * Binary ops, comparisons and where broadcast with NumPy rules and promote dtypes:
 * bool < i32 < i64 < bf16, f16 < f32 < f64, with f16 + bf16 -> f32 and integer + float -> the
 * float type (docs/semantics.md). */
PARITY_API parity_status_t parity_unary(parity_op_t op, parity_tensor_t *x, parity_tensor_t **out);
PARITY_API parity_status_t parity_leaky_relu(parity_tensor_t *x, double slope, parity_tensor_t **out);
PARITY_API parity_status_t parity_binary(parity_op_t op, parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out);
/* eq, ne, lt, le, gt, ge -> bool; never differentiable. */
PARITY_API parity_status_t parity_compare(parity_op_t op, parity_tensor_t *a, parity_tensor_t *b,
                                          parity_tensor_t **out);
PARITY_API parity_status_t parity_where(parity_tensor_t *cond, parity_tensor_t *a, parity_tensor_t *b,
                                        parity_tensor_t **out);
PARITY_API parity_status_t parity_cast(parity_tensor_t *x, parity_dtype_t dtype, parity_tensor_t **out);
/* sum, mean, max, min, argmax, argmin over the axes in axes_mask (bit k = axis k; 0 = all). */
PARITY_API parity_status_t parity_reduce(parity_op_t op, parity_tensor_t *x, uint32_t axes_mask, int keepdim,
                                         parity_tensor_t **out);
/* The same over a list of axes (negative ones count from the end; each at most once; naxes 0 =
 * all). argmax/argmin take exactly one axis or all. */
PARITY_API parity_status_t parity_reduce_axes(parity_op_t op, parity_tensor_t *x, uint32_t naxes, const int32_t *axes,
                                              int keepdim, parity_tensor_t **out);
/* Batched [.., m, k] x [.., k, n] with broadcast batch axes (both ranks >= 2). */
PARITY_API parity_status_t parity_matmul(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out);
/* Option structs: struct_size first (set by the _init function, or 0 for the layout in this
 * header), and a zero field means its default, so `{0}`, designated initializers naming only
 * what differs, and _init all work. Fields added later are appended; the library reads only
 * within struct_size. */
typedef struct parity_conv2d_options_t {
  uint32_t struct_size;
  int32_t stride[2];         /* 0 = 1 */
  int32_t padding[4];        /* top, bottom, left, right; 0 = none */
  int32_t dilation[2];       /* 0 = 1 */
  int32_t groups;            /* 0 = 1 */
  int32_t output_padding[2]; /* conv_transpose2d only: rows/columns added at the bottom/right of
                              * the output, each below its stride or its dilation; 0 = none */
} parity_conv2d_options_t;
PARITY_API void parity_conv2d_options_init(parity_conv2d_options_t *opts);
/* NCHW; bias may be NULL; opts NULL = all defaults. */
PARITY_API parity_status_t parity_conv2d(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *bias,
                                         const parity_conv2d_options_t *opts, parity_tensor_t **out);
/* Transposed convolution (the adjoint of conv2d): w is [C_in, C_out/groups, KH, KW]; the output
 * is (H - 1) * stride - pad_top - pad_bottom + dilation * (KH - 1) + 1 + output_padding rows. */
PARITY_API parity_status_t parity_conv_transpose2d(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *bias,
                                                   const parity_conv2d_options_t *opts, parity_tensor_t **out);
typedef struct parity_pool2d_options_t {
  uint32_t struct_size;
  int32_t kernel[2];         /* required, >= 1 */
  int32_t stride[2];         /* 0 = the kernel size */
  int32_t padding[4];        /* top, bottom, left, right; 0 = none */
  int32_t dilation[2];       /* 0 = 1 */
  int32_t count_include_pad; /* avg_pool2d: padding counts in the divisor when non-zero */
} parity_pool2d_options_t;
PARITY_API void parity_pool2d_options_init(parity_pool2d_options_t *opts);
PARITY_API parity_status_t parity_pool2d(parity_op_t op /* max_pool2d | avg_pool2d */, parity_tensor_t *x,
                                         const parity_pool2d_options_t *opts, parity_tensor_t **out);
/* softmax | log_softmax over `axis`. */
PARITY_API parity_status_t parity_softmax(parity_op_t op, parity_tensor_t *x, int32_t axis, parity_tensor_t **out);

/* ---- scopes ------------------------------------------------------------------------------------
 * Every tensor a call on this thread hands out between parity_scope_begin and the matching
 * parity_scope_end (results of ops, views, creation functions) is released at scope_end, unless
 * kept: no release ladders, no arrays of temporaries.
 *   parity_scope_begin();
 *   parity_linear(x, w, b, &h); parity_unary(PARITY_OP_RELU, h, &a); parity_mse_loss(a, t, &loss);
 *   parity_backward(loss, NULL, 0);       (gradients and optimizer state are never a scope's)
 *   parity_scope_keep(loss);              (loss outlives the scope: the enclosing one's, or yours)
 *   parity_scope_end();                   (h, a released)
 * scope_end drops the reference the call handed out: a tensor retained meanwhile lives on, one
 * released meanwhile is simply gone from the scope. Scopes nest (64 per thread) and belong to
 * the thread that opened them: release or keep a tensor made in a scope on that thread. */
PARITY_API parity_status_t parity_scope_begin(void);
PARITY_API parity_status_t parity_scope_end(void);
/* Move t out of its scope into the enclosing one (from the outermost: to the caller, who
 * releases it). FAILED_PRECONDITION when t belongs to no open scope of this thread. */
PARITY_API parity_status_t parity_scope_keep(parity_tensor_t *t);
/* How many scopes are open on this thread. */
PARITY_API uint32_t parity_scope_depth(void);

/* ---- autodiff ------------------------------------------------------------------------------ */
/* Only float tensors can require grad. */
PARITY_API parity_status_t parity_tensor_set_requires_grad(parity_tensor_t *t, int requires_grad);
PARITY_API int parity_tensor_requires_grad(const parity_tensor_t *t);
/* Borrowed; NULL when no gradient has been accumulated. */
PARITY_API parity_tensor_t *parity_tensor_grad(const parity_tensor_t *t);
PARITY_API void parity_tensor_zero_grad(parity_tensor_t *t);
/* A hook on a leaf that requires grad, called by parity_backward on its thread as soon as the
 * leaf's gradient from that backward is final (every contribution accumulated; .grad may be NULL
 * when no gradient reached it), while backward goes on with the rest of the graph: the moment to
 * start communicating it (parity_dist's buckets do). Each backward through the leaf calls it once.
 * Grad mode is off inside the hook; it may read the gradient and issue ops, not call backward. A
 * status other than OK stops the backward with that status. fn NULL removes the hook. */
typedef parity_status_t (*parity_grad_hook_fn)(parity_tensor_t *leaf, void *user);
PARITY_API parity_status_t parity_tensor_set_grad_hook(parity_tensor_t *t, parity_grad_hook_fn fn, void *user);
/* A view of the same storage that records no history. */
PARITY_API parity_status_t parity_detach(parity_tensor_t *x, parity_tensor_t **out);
/* Fill .grad of every leaf reachable from loss. seed may be NULL only for a one-element loss
 * (seed = 1). The graph's saved tensors are freed afterwards unless retain_graph is set; a second
 * backward through a freed graph is an error. */
PARITY_API parity_status_t parity_backward(parity_tensor_t *loss, parity_tensor_t *seed, int retain_graph);
/* Grad mode is per thread. set returns the previous mode: `int was = parity_grad_mode_set(0);
 * ... parity_grad_mode_set(was);` turns recording off for a block and nests. */
PARITY_API int parity_grad_mode_set(int enabled);
PARITY_API int parity_grad_mode_enabled(void);

/* ---- plans: capture once, replay many ------------------------------------------------------ */
typedef struct parity_plan_t parity_plan_t;
/* Start recording every device command issued on dev by this thread.
 * A plan binds tensors, not their contents: launches and fills are recorded, host writes are not,
 * so data written into a tensor (during recording or between replays) is what replay computes
 * with. A training step records whole: create the optimizer first (its state lives on the
 * device), then record zero_grad, forward, loss, backward and optimizer_step once, and replay it
 * after writing each new batch into the input tensors. The plan keeps every storage it touched
 * alive: releasing or reshaping a captured tensor afterwards leaves replay well defined.
 * Ops another thread issues on dev meanwhile run eagerly and are not recorded. A tensor the plan
 * fills while recording (a constant, zero_grad's gradients, a parameter made inside) is the plan's:
 * replay refills it, so an eager write into it (an op's output, a fill, parity_tensor_write, an
 * optimizer step) is refused with FAILED_PRECONDITION until the plan is destroyed. */
PARITY_API parity_status_t parity_plan_begin(parity_device_t *dev, parity_plan_t **out);
/* Stop recording. Tensors created while recording keep their storage as long as the plan lives. */
PARITY_API parity_status_t parity_plan_end(parity_plan_t *plan);
/* Re-issue the recorded commands in the same order on the same buffers: write new values into
 * the plan's input tensors with parity_tensor_write first. Allocates nothing. A replay leaves out
 * what no one can see: commands whose results no tensor reaches any more (tensors released while
 * recording, read by nothing kept), and commands that would write the same bits every time (a
 * backward's seed of ones and what is computed from it alone); every tensor you hold gets the
 * bits the whole list would give it. PARITY_PLAN_PRUNE=0 keeps every command. */
PARITY_API parity_status_t parity_plan_replay(parity_plan_t *plan);
/* The commands a replay issues (recorded, less those left out). */
PARITY_API uint64_t parity_plan_command_count(const parity_plan_t *plan);
/* A plan destroyed twice (or ended or replayed after destroy) is refused with a message, like a
 * tensor's double release, as long as it is among the last 64 plans destroyed. */
PARITY_API void parity_plan_destroy(parity_plan_t *plan);

#ifdef __cplusplus
}
#endif
#endif /* PARITY_TENSOR_H */
