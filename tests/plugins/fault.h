/* fault.h — the fault-injection test plugin (never installed; found only through
 * PARITY_PLUGIN_PATH). It is the CPU plugin with exactly one bug, chosen by PARITY_FAULT when the
 * plugin is loaded; with PARITY_FAULT unset it is the CPU plugin unchanged. The conformance tests
 * (tests/conform/) prove parity-conform fails on each bug. */
#ifndef PARITY_FAULT_H
#define PARITY_FAULT_H

#include "cpu_internal.h"

/* X(ENUM, "name"): every fault the plugin can inject. */
#define FAULT_LIST(X)                                                                                               \
  X(COMPARE_EPS, "compare-eps")                         /* comparisons evaluated on a + eps */                      \
  X(SOFTMAX_BWD_UNROUNDED, "softmax-bwd-unrounded")     /* f16/bf16 backward from unrounded y */                    \
  X(TIE_FIRST, "tie-first")                             /* ties get the whole gradient, first wins */               \
  X(CONV_PAD, "conv-pad")                               /* conv2d padding off by one */                             \
  X(RELU_GRAD_AT_ZERO, "relu-grad-at-zero")             /* relu'(0) = 1 */                                          \
  X(SUM_F16, "sum-f16")                                 /* sums accumulated in f16 */                               \
  X(NONDETERMINISTIC_REDUCE, "nondeterministic-reduce") /* start of the sum rotates per call */                     \
  X(WRITE_PAST_END, "write-past-end")                   /* one element written past the output */                   \
  X(FALSE_F64, "false-f64")                             /* claims float64, computes f64 in f32 */                   \
  X(MAX_DROPS_NAN, "max-drops-nan")                     /* max/maximum ignore NaN */                                \
  X(INDUCTOR_RECOMPUTE, "inductor-recompute")           /* see fault_inductor_* below */                            \
  X(REFUSE_ALL, "refuse-all")                           /* supports() refuses every op; claims none */              \
  X(REFUSE_ALL_CLAIMS, "refuse-all-claims")             /* refuses every op; claims the CPU's dtypes and float64 */ \
  X(LIE_DTYPES, "lie-dtypes")                           /* runs f32 add, mul, sum only; claims all */               \
  X(CRASH_SUM, "crash-sum")                             /* SIGSEGV inside the f32 sum kernel */                     \
  X(SUM_GRAD_READS_X, "sum-grad-reads-x")               /* sum backward dy + 0 * x: NaN in x reaches dx */          \
  X(WRITE_READS_LATE, "write-reads-late")               /* buffer_write reads the caller's memory later */          \
  /* kernel mutants (fault_mutants.c): the bug classes GPU backends ship */                                         \
  X(NAIVE_SUM, "naive-sum")                   /* one sequential f32 accumulator per sum */                          \
  X(DROP_PARTIAL, "drop-partial")             /* long sums: one of 512 partials lost */                             \
  X(ARRIVAL_ORDER, "arrival-order")           /* long sums: partials in another order on every 4th call */          \
  X(POSITIVE_ZERO_SUM, "positive-zero-sum")   /* sums start from +0: a sum of -0s is +0 */                          \
  X(BF16_TRUNCATE, "bf16-truncate")           /* bf16 sums stored by truncation */                                  \
  X(LOWP_TRUNCATE, "lowp-truncate")           /* f16/bf16 add, sub, mul stored by truncation */                     \
  X(BCAST_CONTIGUOUS, "bcast-contiguous")     /* wide binary ops read a broadcast operand as contiguous */          \
  X(SIGMOID_UNDERFLOW, "sigmoid-underflow")   /* f32 sigmoid 1/(1+exp(-x)): 0 below -88.7 */                        \
  X(EXP_FLUSH, "exp-flush")                   /* f32 exp flushes subnormal results (undeclared) */                  \
  X(POW_GRAD_NAN, "pow-grad-nan")             /* pow backward without the a = 0 / b = 0 rules */                    \
  X(CAST_RTZ, "cast-rtz")                     /* f32/f64 -> f16/bf16 casts truncate */                              \
  X(CAST_DOUBLE_ROUND, "cast-double-round")   /* f64 -> f16/bf16 through f32: rounds twice */                       \
  X(MATMUL_DROP_KTILE, "matmul-drop-ktile")   /* K >= 4096: the last 256-wide K tile is lost */                     \
  X(MAXIMUM_NAN_SECOND, "maximum-nan-second") /* maximum/minimum check NaN in a only */                             \
  X(STRIDED_WIDE, "strided-wide")             /* wide unary ops read a strided input as contiguous */               \
  X(SOFTMAX_MEAN_SHIFT, "softmax-mean-shift") /* softmax subtracts the row mean, not the max */                     \
  X(INPLACE_COPY_FIRST, "inplace-copy-first") /* binary c = a op b as c = a, then c op= b: c in b gives a op a */   \
  /* NaN signs that change from call to call: allowed (any NaN equals any NaN) */                                   \
  X(NAN_SIGN_FLIPS, "nan-sign-flips")         /* every other elementwise call flips NaN signs */                    \
  X(NAN_SIGN_UNWRITTEN, "nan-sign-unwritten") /* same, and f16 add leaves its last element unwritten */

typedef enum fault_t {
  FAULT_NONE = 0,
#define FAULT_X_(E, s) FAULT_##E,
  FAULT_LIST(FAULT_X_)
#undef FAULT_X_
} fault_t;

extern fault_t fault_active;
extern const parity_plugin_api_t *fault_cpu; /* the real CPU plugin's table */

/* Logical (row-major) element i of a tensor, as f64; store the same way (fault_kernels.c). */
unsigned char *fault_element(const parity_tensor_desc_t *t, int64_t i);
double fault_load(const parity_tensor_desc_t *t, int64_t i);
void fault_store(const parity_tensor_desc_t *t, int64_t i, double v);
/* The output element (logical index) that logical element i of x reduces into. */
int64_t fault_reduced_index(const parity_tensor_desc_t *x, uint32_t axes, int64_t i);

/* write-reads-late (fault_late_write.c): wrap api's buffer, queue and kernel entries so that writes
 * run when the next command does. */
void fault_late_write_install(parity_plugin_api_t *api);

/* Kernel mutants (fault_mutants.c), each applied after (or instead of) the CPU kernel that
 * accepted the descriptor; `handled` = 0 leaves the CPU result alone. */
int32_t fault_mutant_reduce(const parity_op_desc_t *d, int *handled);
int32_t fault_mutant_elementwise(const parity_op_desc_t *d);          /* after the CPU forward */
int32_t fault_mutant_elementwise_backward(const parity_op_desc_t *d); /* after the CPU backward */
int32_t fault_mutant_matmul(const parity_op_desc_t *d);               /* after the CPU forward */
int32_t fault_mutant_softmax(const parity_op_desc_t *d);              /* after the CPU forward */
/* 1 when strided-wide applies: *out is d with its input read densely (through *dense). */
int fault_mutant_dense_view(const parity_op_desc_t *d, parity_op_desc_t *out, parity_tensor_desc_t *dense);

/* Host-side replacements (fault_kernels.c). Each is called with a descriptor the CPU plugin has
 * accepted (supports() and extents), and returns a parity_status_t. */
int32_t fault_compare_eps(const parity_op_desc_t *d);
int32_t fault_softmax_remember(const parity_op_desc_t *d);
void fault_forget(void); /* drop what fault_softmax_remember kept */
int32_t fault_softmax_backward_unrounded(const parity_op_desc_t *d, int *handled);
int32_t fault_tie_first_binary(const parity_op_desc_t *d);
int32_t fault_tie_first_reduce(const parity_op_desc_t *d);
int32_t fault_tie_first_pool(const parity_op_desc_t *d);
int32_t fault_relu_grad(const parity_op_desc_t *d);
int32_t fault_sum_grad_reads_x(const parity_op_desc_t *d);
int32_t fault_sum(const parity_op_desc_t *d, int f16_accumulator, int rotate);
int32_t fault_write_past_end(const parity_op_desc_t *d);
int32_t fault_max_drop_nan(const parity_op_desc_t *d);
/* Run `fn` with every f64 operand replaced by an f32 copy (outputs widened back). */
int32_t fault_via_f32(parity_kernel_fn fn, parity_plugin_device_t *dev, const parity_op_desc_t *d);
/* The same for operands whose dtype bit is in dtype_mask; with keep != NULL the f32 values of
 * output 0 (before rounding to its dtype) are handed over in *keep (malloc'ed, logical order). */
int32_t fault_via_f32_dtypes(parity_kernel_fn fn, parity_plugin_device_t *dev, const parity_op_desc_t *d,
                             uint32_t dtype_mask, float **keep);

/* inductor-recompute, the PyTorch Inductor report at plugin level: a bf16/f16 conv2d forward keeps
 * its unrounded f32 output; a log_softmax forward that comes right after it takes max and
 * log-sum-exp from those unrounded logits, and its backward recomputes the probabilities as
 * exp(stored logit - max - lse), mixing rounded logits with unrounded statistics. */
void fault_inductor_conv_output(float *unrounded, int64_t n); /* takes ownership */
void fault_inductor_other_forward(void);                      /* any other forward ran */
int32_t fault_inductor_logsoftmax_forward(const parity_op_desc_t *d);
int32_t fault_inductor_logsoftmax_backward(const parity_op_desc_t *d, int *handled);
/* The descriptor with every f64 tensor retyped f32 (for supports()). */
void fault_retype_f64(const parity_op_desc_t *d, parity_op_desc_t *out, parity_tensor_desc_t *tensors);

#endif
