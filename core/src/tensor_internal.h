/* tensor_internal.h — tensors, storage, autodiff nodes and plans inside libparity. */
#ifndef PARITY_TENSOR_INTERNAL_H
#define PARITY_TENSOR_INTERNAL_H

#include "internal.h"

/* Reference-counted device memory from the device's caching allocator. */
typedef struct parity__storage {
  int refs;
  parity_device_t *dev;
  parity_buffer_t *buf;
  uint64_t bytes;      /* usable size (the buffer may be larger: its size class) */
  uint32_t plan_fills; /* fills that live plans re-run on every replay (plan.c): writes are refused */
  int plan_holds;      /* of refs, those live plans hold (plan.c): no tensor's */
} parity__storage;

typedef struct parity__node parity__node;

#define PARITY__TENSOR_LIVE 0x7465736eu /* "tens" */
#define PARITY__TENSOR_DEAD 0xdeadbeefu

struct parity_tensor_t {
  uint32_t magic; /* LIVE while referenced; DEAD in the release quarantine */
  int refs;
  parity__storage *st;
  int32_t dtype;
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[PARITY_MAX_RANK]; /* elements */
  int64_t offset;                   /* elements */
  int requires_grad;                /* leaves: set by the user; results: any input requires */
  parity_tensor_t *grad;            /* leaves only */
  parity__node *node;               /* the op that made it (NULL for leaves and no-grad results) */
  uint32_t scope_level;             /* 1.. = the open scope (scope.c) that releases it; 0 = none */
  uint32_t scope_slot;
  parity_grad_hook_fn grad_hook; /* leaves: called when a backward has made .grad final */
  void *grad_hook_user;
  uint32_t hook_pending; /* during a backward: contributions to .grad still to come */
};

/* Gradient function: given the gradient of the node's output, produce one gradient per input
 * (NULL where an input needs none). Shapes of gin[i] equal the inputs' shapes. */
typedef parity_status_t (*parity__backward_fn)(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin);

#define PARITY__NODE_MAX_IN 4
#define PARITY__NODE_MAX_SAVED 4

struct parity__node {
  int refs;
  const char *name; /* for messages: "matmul", "reshape", ... */
  const char *call; /* the public function the user called, when it differs
                                   * ("transpose" made a permute node); NULL otherwise */
  parity__backward_fn backward;
  uint32_t nin;
  parity_tensor_t *in[PARITY__NODE_MAX_IN];       /* parents (retained; NULL = no grad needed) */
  parity_tensor_t *saved[PARITY__NODE_MAX_SAVED]; /* detached tensors backward needs */
  int32_t op;
  parity_op_params_t params;
  int64_t aux[PARITY_MAX_RANK * 2]; /* per-op extra data (axes, shapes) */
  uint32_t aux_rank;
  int freed; /* saved tensors released by an earlier backward */
  /* engine bookkeeping */
  parity_tensor_t *gacc;
  uint64_t mark;
  uint64_t seq; /* creation order, process-wide: names the node in verification reports */
};

/* Hand t to the caller on success; release it on failure. Returns st. */
static inline parity_status_t parity__finish(parity_status_t st, parity_tensor_t *t, parity_tensor_t **out) {
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(t);
    return st;
  }
  *out = t;
  return PARITY_STATUS_OK;
}

/* verify.c: shadow verification (PARITY_VERIFY=cpu). After a launch on dev, run the same op on
 * the CPU plugin in float64 and judge every output by the conformance rule; the first op that
 * breaks its bound is logged and kept as the device's report. An op run in place (an output in an
 * input's memory) has its inputs read before the launch (parity__verify_before: NULL when
 * verification is off or nothing aliases); parity__verify_launch (ran: the launch succeeded) takes
 * them and frees them. */
typedef struct parity__verify_inputs parity__verify_inputs;
parity__verify_inputs *parity__verify_before(parity_device_t *dev, parity_tensor_t *const *ins, uint32_t nin,
                                             parity_tensor_t *const *outs, uint32_t nout);
void parity__verify_launch(parity_device_t *dev, const parity_op_desc_t *d, parity_tensor_t *const *ins, uint32_t nin,
                           parity_tensor_t *const *outs, uint32_t nout, int ran, parity__verify_inputs *pre);
/* The node whose backward is running on this thread (NULL outside backward). */
void parity__verify_set_node(const parity__node *n);

/* tensor.c */
parity_status_t parity__tensor_empty(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                                     parity_tensor_t **out);
parity_status_t parity__tensor_empty_like(const parity_tensor_t *x, parity_tensor_t **out);
/* A new tensor of x's shape and dtype laid out as x is when x is a permutation of a dense layout
 * (a transposed weight), else contiguous. */
parity_status_t parity__tensor_empty_as(const parity_tensor_t *x, parity_tensor_t **out);
parity_tensor_t *parity__tensor_alias(const parity_tensor_t *x); /* detached view, same layout */
void parity__tensor_desc(const parity_tensor_t *t, parity_tensor_desc_t *d);
int parity__same_shape(const parity_tensor_t *a, const parity_tensor_t *b);
const char *parity__shape_str(const parity_tensor_t *t, char *buf, size_t n);
parity_status_t parity__fill(parity_tensor_t *t, double value); /* contiguous t */
/* Enqueue one op on tensors (NULL entries allowed). Records into the device's plan when one is
 * capturing. */
parity_status_t parity__launch(parity_device_t *dev, int32_t op, int32_t direction, parity_tensor_t *const *ins,
                               uint32_t nin, parity_tensor_t *const *outs, uint32_t nout,
                               const parity_op_params_t *params);

/* scope.c. register: a new tensor joins this thread's innermost open scope (if any); forget:
 * it leaves its scope (released or adopted); adopt: the library keeps t (saved for backward, a
 * gradient, optimizer state), so no scope may release it. Returns t. */
void parity__scope_register(parity_tensor_t *t);
void parity__scope_forget(parity_tensor_t *t);
parity_tensor_t *parity__adopt(parity_tensor_t *t);
/* Release a temporary the library made (a composite's intermediate): out of the caller's scope
 * first, since the library holds its creation reference, not the scope. Without that, an
 * intermediate an autograd node still retains would be released again at scope_end. */
static inline void parity__release_temp(parity_tensor_t *t) { parity_tensor_release(parity__adopt(t)); }

/* alloc.c: caching allocator */
parity_status_t parity__storage_new(parity_device_t *dev, uint64_t bytes, parity__storage **out);
void parity__storage_release(parity__storage *st);
void parity__cache_drain(parity_device_t *dev);

/* plan.c */
/* in_st, out_st: the storage of each input and output slot of d (NULL where d has no tensor) */
void parity__plan_record_launch(parity_plan_t *plan, const parity_op_desc_t *d, parity__storage *const *in_st,
                                parity__storage *const *out_st);
void parity__plan_record_fill(parity_plan_t *plan, parity__storage *st, uint64_t off, uint64_t size,
                              const void *pattern, uint32_t psize);
/* A storage the host wrote while recording: kept alive by the plan, its data never replayed. */
void parity__plan_host_write(parity_plan_t *plan, parity__storage *st);

/* autograd.c */
/* The public function the user called, for node messages: composites (transpose, squeeze,
 * unsqueeze, linear, losses) set it around the ops they are made of; only the outermost counts.
 * Returns the previous value for parity__call_end. */
const char *parity__call_begin(const char *name);
void parity__call_end(const char *prev);
/* After the outermost public call `name` (prev NULL) failed: its message names that call first
 * ("mse_loss: sub: shapes ... cannot be broadcast"), not only the inner op. Returns st. */
parity_status_t parity__name_call(const char *prev, const char *name, parity_status_t st);
int parity__grad_on(void);
/* New node with `nin` parents; parents that do not require grad are stored as NULL. */
parity__node *parity__node_new(const char *name, parity__backward_fn fn, uint32_t nin, parity_tensor_t *const *in);
/* Attach node to out (takes the node's reference) and mark out as requiring grad. */
void parity__node_attach(parity_tensor_t *out, parity__node *n);
void parity__node_release(parity__node *n);
int parity__any_requires_grad(parity_tensor_t *const *ts, uint32_t n);
/* When x requires grad: record on y a node whose backward runs the plugin's backward of op
 * with {x, y, dy} -> dx (unary, reduce, pool). */
parity_status_t parity__record_xy(int32_t op, const char *name, parity_tensor_t *x, parity_tensor_t *y,
                                  const parity_op_params_t *params);

/* ops helpers shared by the op files */
/* A new tensor viewing x as it is (gradient passes through unchanged): what a function returns
 * when it has nothing to compute, so the caller (and its scope) gets a tensor of its own. */
parity_status_t parity__identity_view(parity_tensor_t *x, const char *name, parity_tensor_t **out);
parity_status_t parity__copy_into(parity_tensor_t *dst, parity_tensor_t *src); /* same shape+dtype */
parity_status_t parity__sum_to_shape(parity_tensor_t *g, uint32_t rank, const int64_t *shape, parity_tensor_t **out);
parity_status_t parity__add_raw(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out);
/* dst = a op b (a binary op), into dst, with no graph: all three of one shape and dtype; dst may be
 * a or b itself (in place, as the ABI allows an elementwise forward), else shares no memory with them */
parity_status_t parity__binary_into(int32_t op, parity_tensor_t *dst, parity_tensor_t *a, parity_tensor_t *b);
parity_status_t parity__check_same_device(const char *op, parity_tensor_t *const *ts, uint32_t n);

#endif
