/* elementwise.c — the elementwise kernel family: row selection and the strided, parallel walk
 * over operands (shapes and dtypes are the operand contract's, checked in supports()). The row kernels live in elementwise_unary.c,
 * elementwise_binary.c and elementwise_logic.c; the scalar semantics in elementwise_math.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_parallel.h"
#include "elementwise_internal.h"

/* ---- operands ------------------------------------------------------------------------------ */

/* Inputs then outputs, in the order the row kernels take them (parity_plugin.h, OPERANDS). */
typedef struct ew_operands_t {
  uint32_t count, num_inputs;
  const parity_tensor_desc_t *t[EW_MAX_OPERANDS];
  const char *name[EW_MAX_OPERANDS];
} ew_operands_t;

/* Returns 0 when the operand counts do not fit the op's kind and direction; names and slots from
 * the one operand table (parity_support/operands.h). */
static int gather(const parity_op_desc_t *d, int32_t kind, ew_operands_t *o) {
  const psup_operands_t *ops = psup_operands(kind, d->direction);
  if (!ops || d->num_inputs != ops->num_inputs || d->num_outputs != ops->num_outputs) return 0;
  o->count = d->num_inputs + d->num_outputs;
  o->num_inputs = d->num_inputs;
  for (uint32_t i = 0; i < d->num_inputs; i++) o->t[i] = d->inputs[i], o->name[i] = ops->in[i].name;
  for (uint32_t i = 0; i < d->num_outputs; i++)
    o->t[d->num_inputs + i] = d->outputs[i], o->name[d->num_inputs + i] = ops->out[i].name;
  return 1;
}

/* "a f32[2,3], b f32[3], c f32[2,3]" */
static const char *operands_str(const ew_operands_t *o, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (uint32_t k = 0; k < o->count && n < size; k++) {
    const parity_tensor_desc_t *t = o->t[k];
    if (!t) {
      n += (size_t)snprintf(buf + n, size - n, "%s%s NULL", k ? ", " : "", o->name[k]);
      continue;
    }
    n += (size_t)snprintf(buf + n, size - n, "%s%s %s[", k ? ", " : "", o->name[k], psup_dtype_name(t->dtype));
    for (uint32_t a = 0; a < t->rank && n < size; a++)
      n += (size_t)snprintf(buf + n, size - n, a ? ",%lld" : "%lld", (long long)t->shape[a]);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "]");
  }
  return buf;
}

/* ---- row selection ------------------------------------------------------------ */

static ew_row_fn pick_row(int32_t op, int32_t kind, int bwd, int32_t dtype, int32_t dst_dtype) {
  const cpu_kernels_t *k = cpu_kernels();
  switch (kind) {
    case PARITY_OP_KIND_UNARY: return bwd ? k->unary_backward_row(op, dtype) : k->unary_forward_row(op, dtype);
    case PARITY_OP_KIND_BINARY: return bwd ? k->binary_backward_row(op, dtype) : k->binary_forward_row(op, dtype);
    case PARITY_OP_KIND_COMPARE: return k->compare_row(op, dtype);
    case PARITY_OP_KIND_SELECT: return bwd ? k->where_backward_row(dtype) : k->where_forward_row(dtype);
    case PARITY_OP_KIND_CAST: return k->cast_row(dtype, dst_dtype);
    default: return 0;
  }
}

/* Pick the row kernel of `d` (a descriptor the operand contract accepted: psup_check_operands in
 * cpu_plugin.c's supports() checked its shapes and dtypes). Reports UNSUPPORTED, naming the dtypes
 * that have one, when none exists for its op, direction and dtype(s). */
static int32_t prepare(const parity_op_desc_t *d, ew_operands_t *o, ew_row_fn *out_row) {
  const psup_op_info_t *info = psup_op_info(d->op);
  const char *op = info->name, *dir = psup_direction_name(d->direction);
  if (!gather(d, info->kind, o))
    return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: %s %s: wrong operand count (%u inputs, %u outputs)", op, dir,
                    d->num_inputs, d->num_outputs);
  int bwd = d->direction == PARITY_DIRECTION_BACKWARD;
  uint32_t first = info->kind == PARITY_OP_KIND_SELECT ? 1 : 0; /* where's cond is bool */
  int32_t dtype = o->t[first]->dtype, dst = info->kind == PARITY_OP_KIND_CAST ? o->t[1]->dtype : dtype;
  ew_row_fn row = pick_row(d->op, info->kind, bwd, dtype, dst);
  if (!row) {
    char takes[64] = "", ops[400];
    size_t n = 0;
    for (int32_t dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BOOL; dt++)
      if (pick_row(d->op, info->kind, bwd, dt, dt) && n < sizeof takes)
        n += (size_t)snprintf(takes + n, sizeof takes - n, "%s%s", n ? ", " : "", psup_dtype_name(dt));
    return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s %s is not provided for %s (it takes %s): %s", op, dir,
                    psup_dtype_name(dtype), takes, operands_str(o, ops, sizeof ops));
  }
  *out_row = row;
  return PARITY_STATUS_OK;
}

/* ---- the strided walk -------------------------------------------------------------------------- */

/* Fixed work unit of the parallel split (elements); independent of the thread count. */
#define EW_BLOCK ((int64_t)1 << 14)

typedef struct ew_plan_t {
  uint32_t count, rank; /* rank >= 1 after collapsing */
  int64_t numel;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[EW_MAX_OPERANDS][PARITY_MAX_RANK]; /* elements */
  int64_t esize[EW_MAX_OPERANDS];
  unsigned char *base[EW_MAX_OPERANDS];
} ew_plan_t;

/* Drop size-1 axes and merge neighbours that every operand walks as one (outer stride ==
 * inner stride * inner size), so contiguous views become one long row. */
static void plan_init(ew_plan_t *pl, const parity_tensor_desc_t *const *t, uint32_t count) {
  const parity_tensor_desc_t *ref = NULL;
  for (uint32_t k = 0; k < count && !ref; k++) ref = t[k];
  pl->count = count;
  pl->rank = 0;
  pl->numel = psup_numel(ref);
  for (uint32_t k = 0; k < count; k++) {
    pl->base[k] = t[k] ? cpu_base(t[k]) : NULL;
    pl->esize[k] = t[k] ? psup_dtype_size(t[k]->dtype) : 0;
  }
  for (uint32_t a = 0; a < ref->rank; a++) {
    if (ref->shape[a] == 1) continue;
    uint32_t r = pl->rank;
    int merge = r > 0;
    for (uint32_t k = 0; merge && k < count; k++)
      if (t[k]) merge = pl->strides[k][r - 1] == t[k]->strides[a] * ref->shape[a];
    if (merge) {
      pl->shape[r - 1] *= ref->shape[a];
      for (uint32_t k = 0; k < count; k++) pl->strides[k][r - 1] = t[k] ? t[k]->strides[a] : 0;
    } else {
      pl->shape[r] = ref->shape[a];
      for (uint32_t k = 0; k < count; k++) pl->strides[k][r] = t[k] ? t[k]->strides[a] : 0;
      pl->rank++;
    }
  }
  if (pl->rank == 0) { /* a scalar or all sizes 1 */
    pl->rank = 1;
    pl->shape[0] = 1;
    for (uint32_t k = 0; k < count; k++) pl->strides[k][0] = 0;
  }
  /* A short inner axis would cost a row-kernel call every few elements: walk the longest axis
   * innermost instead (elements are independent, so the order does not change any result). */
  uint32_t last = pl->rank - 1, longest = last;
  for (uint32_t a = 0; a < last; a++)
    if (pl->shape[a] > pl->shape[longest]) longest = a;
  if (pl->shape[last] < 16 && longest != last) {
    int64_t t0 = pl->shape[last];
    pl->shape[last] = pl->shape[longest];
    pl->shape[longest] = t0;
    for (uint32_t k = 0; k < count; k++) {
      int64_t s0 = pl->strides[k][last];
      pl->strides[k][last] = pl->strides[k][longest];
      pl->strides[k][longest] = s0;
    }
  }
}

/* Elements [start, end) in row-major order, one row kernel call per run of the inner axis. */
static void walk(const ew_plan_t *pl, int64_t start, int64_t end, ew_row_fn row, const ew_args_t *args) {
  const uint32_t last = pl->rank - 1, count = pl->count;
  int64_t idx[PARITY_MAX_RANK], off[EW_MAX_OPERANDS] = {0}, s[EW_MAX_OPERANDS];
  unsigned char *p[EW_MAX_OPERANDS];
  int64_t lin = start;
  for (int32_t a = (int32_t)last; a >= 0; a--) {
    idx[a] = lin % pl->shape[a];
    lin /= pl->shape[a];
    for (uint32_t k = 0; k < count; k++) off[k] += idx[a] * pl->strides[k][a];
  }
  for (uint32_t k = 0; k < count; k++) s[k] = pl->strides[k][last];
  for (int64_t i = start; i < end;) {
    int64_t len = pl->shape[last] - idx[last];
    if (len > end - i) len = end - i;
    for (uint32_t k = 0; k < count; k++) p[k] = pl->base[k] ? pl->base[k] + off[k] * pl->esize[k] : NULL;
    row(len, p, s, args);
    i += len;
    if (i >= end) break;
    /* to the start of the next row */
    for (uint32_t k = 0; k < count; k++) off[k] -= idx[last] * s[k];
    idx[last] = 0;
    for (int32_t a = (int32_t)last - 1; a >= 0; a--) {
      for (uint32_t k = 0; k < count; k++) off[k] += pl->strides[k][a];
      if (++idx[a] < pl->shape[a]) break;
      for (uint32_t k = 0; k < count; k++) off[k] -= pl->strides[k][a] * pl->shape[a];
      idx[a] = 0;
    }
  }
}

static void exec(const ew_plan_t *pl, ew_row_fn row, const ew_args_t *args) {
  if (pl->numel == 0) return;
  if (pl->numel < CPU_PARALLEL_MIN_ELEMENTS) {
    walk(pl, 0, pl->numel, row, args);
    return;
  }
  const int64_t blocks = (pl->numel + EW_BLOCK - 1) / EW_BLOCK;
  /* a pass moves about 12 bytes an element (two f32 in, one out); split when that beats the
   * team's wake-up (cpu_parallel.h) */
  const int threads = cpu_split_threads((double)pl->numel * 12.0 / CPU_REDUCE_BYTES_PER_NS, 0.8);
  (void)threads; /* unused without OpenMP */
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
#endif
  for (int64_t b = 0; b < blocks; b++) {
    int64_t end = (b + 1) * EW_BLOCK;
    walk(pl, b * EW_BLOCK, end < pl->numel ? end : pl->numel, row, args);
  }
}

void ew_run(const parity_tensor_desc_t *const *operands, uint32_t count, ew_row_fn row, const ew_args_t *args) {
  ew_plan_t pl;
  plan_init(&pl, operands, count);
  exec(&pl, row, args);
}

/* ---- entries ------------------------------------------------------------------------------------ */

int32_t cpu_elementwise_supports(const parity_op_desc_t *d) {
  ew_operands_t o;
  ew_row_fn row;
  return prepare(d, &o, &row);
}

/* Everything a launch derives from its descriptor: the walk, the row kernel, its arguments. */
typedef struct ew_launch_t {
  int skip; /* no output wanted, or no elements */
  ew_plan_t pl;
  ew_row_fn row;
  ew_args_t args;
} ew_launch_t;

/* The entry's share of prepare(): supports() validated the descriptor (parity_plugin.h), so
 * only the operands and the row kernel are looked up here. */
static int32_t select_row(const parity_op_desc_t *d, ew_operands_t *o, ew_row_fn *out_row) {
  const psup_op_info_t *info = psup_op_info(d->op);
  if (!info || !gather(d, info->kind, o))
    return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: %s: not an elementwise descriptor", psup_op_name(d->op));
  uint32_t first = info->kind == PARITY_OP_KIND_SELECT ? 1 : 0;
  int32_t dtype = o->t[first]->dtype, dst = info->kind == PARITY_OP_KIND_CAST ? o->t[1]->dtype : dtype;
  *out_row = pick_row(d->op, info->kind, d->direction == PARITY_DIRECTION_BACKWARD, dtype, dst);
  return *out_row ? PARITY_STATUS_OK : prepare(d, o, out_row); /* prepare says why */
}

static int32_t derive(const parity_op_desc_t *d, ew_launch_t *l) {
  ew_operands_t o;
  int32_t st = select_row(d, &o, &l->row);
  if (st != PARITY_STATUS_OK) return st;
  int any_output = 0;
  for (uint32_t k = o.num_inputs; k < o.count; k++) any_output |= o.t[k] != NULL;
  l->skip = !any_output || psup_numel(o.t[0]) == 0;
  memset(&l->args, 0, sizeof l->args);
  if (d->op == PARITY_OP_LEAKY_RELU) l->args.alpha = d->params.unary.alpha;
  if (!l->skip) plan_init(&l->pl, o.t, o.count);
  return PARITY_STATUS_OK;
}

static int32_t launch(const void *state) {
  const ew_launch_t *l = state;
  if (!l->skip) exec(&l->pl, l->row, &l->args);
  return PARITY_STATUS_OK;
}

static int32_t run(const parity_op_desc_t *d) {
  ew_launch_t l;
  int32_t st = derive(d, &l);
  return st == PARITY_STATUS_OK ? launch(&l) : st;
}

int32_t cpu_elementwise_prepare(const parity_op_desc_t *d, cpu_step_t *step) {
  ew_launch_t *l = malloc(sizeof *l);
  if (!l) return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: plan_prepare: out of host memory");
  int32_t st = derive(d, l);
  if (st != PARITY_STATUS_OK) {
    free(l);
    return st;
  }
  step->run = launch;
  step->state = l;
  return PARITY_STATUS_OK;
}

int32_t cpu_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return run(d);
}

int32_t cpu_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return run(d);
}
