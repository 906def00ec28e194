/* cases_elementwise.c — the case table: the op list comes from abi/parity_ops.def through the
 * X-macro; each kind contributes its shape variants (here: unary, binary, compare, select, cast;
 * cases_nn.c: reduce, matmul, conv2d, pooling, softmax). A variant marked DEFAULT is in the quick
 * CI subset; every variant is in --full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

enum { W_DEFAULT = 1, W_FULL = 2, W_DEFAULT_F32 = 4 }; /* W_DEFAULT_F32: in the default subset in f32 */
enum { FWD = 1, BWD = 2, BOTH = 3 };
enum { K_UNARY = 1, K_BINARY = 2, K_COMPARE = 4, K_SELECT = 8, K_CAST = 16, K_ALL = 31 };

typedef struct ew_variant_t {
  const char *name;
  uint32_t when, dirs, kinds;
  int32_t values;
  uint32_t rank;
  int64_t shape[3];
  int32_t layout0, layout1, layout_out; /* first two data operands and the output */
  uint32_t bcast0, bcast1;
  uint32_t in_place; /* forward in place: 0, or 1 (2) when the output is the first (second) data operand's view */
} ew_variant_t;

#define C CF_LAYOUT_CONTIG
#define T CF_LAYOUT_TRANSPOSED
#define S CF_LAYOUT_STEP
#define R CF_LAYOUT_REVERSED
#define M CF_LAYOUT_MISALIGNED
static const ew_variant_t ew_variants[] = {
    {"special", W_DEFAULT, FWD, K_ALL, CF_VALUES_SPECIAL, 1, {80}, C, C, C, 0, 0, 0},
    {"mask", W_DEFAULT, FWD, K_COMPARE, CF_VALUES_MASK, 1, {3}, C, C, C, 0, 0, 0},
    {"ties", W_DEFAULT, BOTH, K_ALL, CF_VALUES_TIES, 1, {64}, C, C, C, 0, 0, 0},
    {"empty", W_DEFAULT, FWD, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 1, {0}, C, C, C, 0, 0, 0},
    {"empty-2d", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 2, {4, 0}, C, C, C, 0, 0, 0},
    {"scalar", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 0, {0}, C, C, C, 0, 0, 0},
    {"n1", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {1}, C, C, C, 0, 0, 0},
    {"n7", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {7}, C, C, C, 0, 0, 0},
    {"n31", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {31}, C, C, C, 0, 0, 0},
    {"n32", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {32}, C, C, C, 0, 0, 0},
    {"n33", W_DEFAULT, BOTH, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 1, {33}, C, C, C, 0, 0, 0},
    {"n33", W_FULL, BOTH, K_CAST, CF_VALUES_NORMAL, 1, {33}, C, C, C, 0, 0, 0},
    {"n255", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {255}, C, C, C, 0, 0, 0},
    {"n256", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {256}, C, C, C, 0, 0, 0},
    {"n257", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {257}, C, C, C, 0, 0, 0},
    {"n1023", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {1023}, C, C, C, 0, 0, 0},
    {"n1024", W_FULL, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {1024}, C, C, C, 0, 0, 0},
    {"n1025", W_DEFAULT, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {1025}, C, C, C, 0, 0, 0},
    {"t2d", W_DEFAULT, BOTH, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 2, {17, 33}, T, C, C, 0, 0, 0},
    {"t2d", W_FULL, BOTH, K_CAST, CF_VALUES_NORMAL, 2, {17, 33}, T, C, C, 0, 0, 0},
    {"view", W_DEFAULT, BOTH, K_ALL, CF_VALUES_NORMAL, 3, {5, 7, 3}, R, S, S, 0, 0, 0},
    {"misaligned", W_DEFAULT, BOTH, K_ALL, CF_VALUES_NORMAL, 1, {37}, M, M, M, 0, 0, 0},
    {"edge", W_DEFAULT, BOTH, K_UNARY | K_BINARY, CF_VALUES_EDGE, 1, {112}, C, C, C, 0, 0, 0},
    /* maximum/minimum backward over the special values: a NaN result sends dc to the NaN operand;
     * relu, leaky_relu and abs (special_grad below): a NaN x gives a NaN dx, ±0 the kink's value */
    {"special-grad", W_DEFAULT, BWD, K_UNARY | K_BINARY, CF_VALUES_SPECIAL, 1, {80}, C, C, C, 0, 0, 0},
    /* wider than any launch width or work-group: every layout path of a GPU kernel runs */
    {"bcast-wide", W_DEFAULT, BOTH, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 2, {3, 4099}, C, C, C, 2u, 1u, 0},
    {"view-wide", W_DEFAULT, FWD, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 2, {67, 97}, T, S, C, 0, 0, 0},
    /* a contiguous input into a transposed output: the output's stride is not the input's */
    {"out-transposed", W_DEFAULT_F32, BOTH, K_ALL, CF_VALUES_NORMAL, 2, {9, 31}, C, C, T, 0, 0, 0},
    {"bcast", W_DEFAULT, BOTH, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 2, {9, 13}, C, C, C, 2u, 1u, 0},
    {"bcast-scalar", W_FULL, BOTH, K_ALL & ~K_CAST, CF_VALUES_NORMAL, 2, {6, 10}, C, C, C, 0, 3u, 0},
    {"large", W_FULL, FWD, K_UNARY | K_BINARY, CF_VALUES_NORMAL, 1, {1 << 24}, C, C, C, 0, 0, 0},
    /* in place (the ABI allows it for these forwards; the core's optimizers write parameters so):
     * the output is exactly an input's view, in its buffer; a same-dtype cast only */
    {"in-place", W_DEFAULT, FWD, K_UNARY | K_BINARY | K_SELECT | K_CAST, CF_VALUES_NORMAL, 1, {1025}, C, C, C, 0, 0, 1},
    {"in-place-b", W_DEFAULT_F32, FWD, K_BINARY | K_SELECT, CF_VALUES_NORMAL, 1, {1025}, C, C, C, 0, 0, 2},
    {"in-place-view", W_DEFAULT_F32, FWD, K_UNARY | K_BINARY, CF_VALUES_NORMAL, 3, {5, 7, 3}, S, R, S, 0, 0, 1},
};
#undef C
#undef T
#undef S
#undef R
#undef M

static uint32_t kind_bit(int32_t kind) {
  switch (kind) {
    case PARITY_OP_KIND_UNARY: return K_UNARY;
    case PARITY_OP_KIND_BINARY: return K_BINARY;
    case PARITY_OP_KIND_COMPARE: return K_COMPARE;
    case PARITY_OP_KIND_SELECT: return K_SELECT;
    default: return K_CAST;
  }
}

int cf_dtype_applies(int32_t kind, uint32_t flags, int32_t dtype) {
  if (flags & PARITY_OPF_FLOAT) return psup_dtype_is_float(dtype);
  if (dtype == PARITY_DTYPE_BOOL)
    return kind == PARITY_OP_KIND_COMPARE || kind == PARITY_OP_KIND_SELECT || kind == PARITY_OP_KIND_CAST;
  return 1;
}

cf_case_t *cf_case_push(cf_case_list_t *list) {
  if (list->count == list->cap) {
    size_t cap = list->cap ? list->cap * 2 : 1024;
    cf_case_t *items = realloc(list->items, cap * sizeof *items);
    if (!items) return NULL;
    list->items = items;
    list->cap = cap;
  }
  cf_case_t *c = &list->items[list->count++];
  memset(c, 0, sizeof *c);
  return c;
}

void cf_case_name(cf_case_t *c, const char *variant) {
  if (c->kind == PARITY_OP_KIND_CAST)
    snprintf(c->dtype_label, sizeof c->dtype_label, "%s->%s", psup_dtype_name(c->dtype), psup_dtype_name(c->out_dtype));
  else
    snprintf(c->dtype_label, sizeof c->dtype_label, "%s", psup_dtype_name(c->dtype));
  snprintf(c->variant, sizeof c->variant, "%s", variant);
  snprintf(c->id, sizeof c->id, "%s.%s.%s.%s", psup_op_name(c->op), c->dtype_label, psup_direction_name(c->direction),
           variant);
}

static void set_spec(cf_spec_t *s, int32_t dtype, const ew_variant_t *v, int32_t layout, uint32_t bcast) {
  *s = cf_spec_make(dtype, v->rank, v->shape);
  s->layout = layout;
  s->bcast = bcast;
}

static int push_ew(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags, int32_t dtype, int32_t out_dtype,
                   int32_t dir, const ew_variant_t *v) {
  cf_case_t *c = cf_case_push(list);
  if (!c) return -1;
  c->op = op;
  c->kind = kind;
  c->op_flags = flags;
  c->dtype = dtype;
  c->out_dtype = out_dtype;
  c->direction = dir;
  c->values = v->values;
  c->dy_values = CF_VALUES_NORMAL;
  c->full_only = !(v->when & W_DEFAULT) && !((v->when & W_DEFAULT_F32) && dtype == PARITY_DTYPE_F32);
  c->nout = 1;
  /* the output never carries the misaligned element of a broadcast or reversed input */
  set_spec(&c->out[0], out_dtype, v, v->layout_out == CF_LAYOUT_REVERSED ? CF_LAYOUT_CONTIG : v->layout_out, 0);
  switch (kind) {
    case PARITY_OP_KIND_UNARY:
    case PARITY_OP_KIND_CAST:
      c->nin = 1;
      set_spec(&c->in[0], dtype, v, v->layout0, v->bcast0 ? v->bcast0 : v->bcast1);
      break;
    case PARITY_OP_KIND_SELECT:
      c->nin = 3;
      set_spec(&c->in[0], PARITY_DTYPE_BOOL, v, v->layout0, v->bcast0);
      set_spec(&c->in[1], dtype, v, v->layout1, v->bcast1);
      set_spec(&c->in[2], dtype, v, CF_LAYOUT_CONTIG, 0);
      break;
    default: /* binary, compare */
      c->nin = 2;
      set_spec(&c->in[0], dtype, v, v->layout0, v->bcast0);
      set_spec(&c->in[1], dtype, v, v->layout1, v->bcast1);
      break;
  }
  for (uint32_t i = 0; i < c->nin; i++) c->has_in[i] = 1;
  if (v->in_place) { /* the output is that data operand's view (select's data operands follow its mask) */
    c->in_place = v->in_place + (kind == PARITY_OP_KIND_SELECT);
    c->out[0] = c->in[c->in_place - 1];
  }
  if (kind == PARITY_OP_KIND_UNARY && op == PARITY_OP_LEAKY_RELU) c->params.unary.alpha = 0.01;
  cf_case_name(c, v->name);
  return 0;
}

/* The f64 backward of every differentiable op is also checked against finite differences. */
static int push_fd(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags) {
  static const ew_variant_t fd = {"fd", W_DEFAULT, BWD, K_ALL, CF_VALUES_NORMAL, 2, {3, 7}, 0, 0, 0, 0, 0, 0};
  if (push_ew(list, op, kind, flags, PARITY_DTYPE_F64, PARITY_DTYPE_F64, PARITY_DIRECTION_BACKWARD, &fd) != 0)
    return -1;
  list->items[list->count - 1].mode = CF_MODE_FD;
  return 0;
}

/* Ops whose backward runs the special values (special-grad): maximum and minimum (which operand a
 * NaN or a tie sends dc to) and the kinks of relu, leaky_relu and abs (NaN x: NaN dx). */
static int special_grad(int32_t op) {
  switch (op) {
    case PARITY_OP_MAXIMUM:
    case PARITY_OP_MINIMUM:
    case PARITY_OP_RELU:
    case PARITY_OP_LEAKY_RELU:
    case PARITY_OP_ABS: return 1;
    default: return 0;
  }
}

/* Ops whose gradient is judged at the edges of their range. For products like square' = 2·x·dy
 * at magnitudes near overflow, where the association decides whether an intermediate overflows,
 * the semantics do not fix one answer; those run the edge values forward only. */
static int edge_backward(int32_t op) {
  switch (op) {
    case PARITY_OP_EXP:
    case PARITY_OP_SIGMOID:
    case PARITY_OP_TANH:
    case PARITY_OP_GELU:
    case PARITY_OP_LOG:
    case PARITY_OP_SQRT:
    case PARITY_OP_RSQRT:
    case PARITY_OP_POW:
    case PARITY_OP_SIN:
    case PARITY_OP_COS: return 1;
    default: return 0;
  }
}

int cf_cases_elementwise(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags) {
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++) {
    if (!cf_dtype_applies(kind, flags, dt)) continue;
    for (int32_t to = 1; to <= (kind == PARITY_OP_KIND_CAST ? PARITY_DTYPE_BOOL : 1); to++) {
      int32_t out = kind == PARITY_OP_KIND_CAST ? to : kind == PARITY_OP_KIND_COMPARE ? PARITY_DTYPE_BOOL : dt;
      for (size_t i = 0; i < sizeof ew_variants / sizeof ew_variants[0]; i++) {
        const ew_variant_t *v = &ew_variants[i];
        if (!(v->kinds & kind_bit(kind))) continue;
        if (!strcmp(v->name, "large") && dt != PARITY_DTYPE_F32) continue;
        if (!strcmp(v->name, "edge") && !psup_dtype_is_float(dt)) continue;
        if (!strcmp(v->name, "special-grad") && !special_grad(op)) continue;
        if (v->in_place && kind == PARITY_OP_KIND_CAST && out != dt) continue;
        for (int32_t dir = 0; dir < 2; dir++) {
          if (!(v->dirs & (1u << dir))) continue;
          if (dir == PARITY_DIRECTION_BACKWARD && (!(flags & PARITY_OPF_BACKWARD) || !psup_dtype_is_float(dt)))
            continue;
          if (dir == PARITY_DIRECTION_BACKWARD && !strcmp(v->name, "edge") && !edge_backward(op)) continue;
          if (push_ew(list, op, kind, flags, dt, out, dir, v) != 0) return -1;
        }
      }
    }
  }
  if ((flags & PARITY_OPF_BACKWARD) && push_fd(list, op, kind, flags) != 0) return -1;
  return 0;
}

int cf_cases_build(cf_case_list_t *list, int (*keep_op)(int32_t op, const void *ctx), const void *ctx) {
  memset(list, 0, sizeof *list);
  static const struct {
    int32_t op, kind;
    uint32_t flags;
  } ops[] = {
#define PARITY_OP(id, N, s, K, f) {PARITY_OP_##N, PARITY_OP_KIND_##K, f},
#include "parity_ops.def"
#undef PARITY_OP
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (keep_op && !keep_op(ops[i].op, ctx)) continue;
    int rc;
    switch (psup_kind_family(ops[i].kind)) {
      case PARITY_FAMILY_ELEMENTWISE: rc = cf_cases_elementwise(list, ops[i].op, ops[i].kind, ops[i].flags); break;
      case PARITY_FAMILY_REDUCE: rc = cf_cases_reduce(list, ops[i].op, ops[i].flags); break;
      default: rc = cf_cases_nn(list, ops[i].op, ops[i].kind, ops[i].flags); break;
    }
    if (rc != 0) return -1;
  }
  return 0;
}

void cf_cases_free(cf_case_list_t *list) {
  free(list->items);
  memset(list, 0, sizeof *list);
}
