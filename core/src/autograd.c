/* autograd.c — graph nodes, grad mode, and the reverse-mode engine.
 *
 * Each op result that needs a gradient holds a node; the node holds its parent tensors (and so
 * their nodes) and detached copies of what backward needs. Saved tensors never point back at a
 * node, so the graph has no reference cycles. parity_backward orders the nodes reachable from the
 * loss by depth-first post-order and visits them in reverse, so every node sees the complete sum
 * of its output's gradient before it runs. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "pool.h"
#include "tensor_internal.h"

static _Thread_local int grad_disabled;
static _Atomic uint64_t mark_counter; /* shared by every thread: each backward gets its own mark */

int parity_grad_mode_set(int enabled) {
  int prev = !grad_disabled;
  grad_disabled = !enabled;
  return prev;
}
int parity_grad_mode_enabled(void) { return !grad_disabled; }
int parity__grad_on(void) { return !grad_disabled; }

int parity__any_requires_grad(parity_tensor_t *const *ts, uint32_t n) {
  if (grad_disabled) return 0;
  for (uint32_t i = 0; i < n; i++)
    if (ts[i] && ts[i]->requires_grad) return 1;
  return 0;
}

static _Thread_local const char *outer_call;

const char *parity__call_begin(const char *name) {
  const char *prev = outer_call;
  if (!prev) outer_call = name;
  return prev;
}

void parity__call_end(const char *prev) { outer_call = prev; }

parity_status_t parity__name_call(const char *prev, const char *name, parity_status_t st) {
  if (st == PARITY_STATUS_OK || prev) return st; /* an outer call names itself */
  const char *e = parity_last_error();
  size_t n = strlen(name);
  if (strncmp(e, name, n) == 0 && e[n] == ':') return st; /* it already does */
  char inner[1024];
  snprintf(inner, sizeof inner, "%s", e);
  return parity__fail(st, "%s: %s", name, inner);
}

static parity__pool node_pool = PARITY__POOL_INIT(PARITY__POOL_NODE, parity__node, gacc, 4096);

parity__node *parity__node_new(const char *name, parity__backward_fn fn, uint32_t nin, parity_tensor_t *const *in) {
  parity__node *n = parity__pool_get(&node_pool);
  if (!n) return NULL;
  static _Atomic uint64_t next_seq = 1;
  n->refs = 1;
  n->seq = next_seq++;
  n->name = name;
  n->call = outer_call && strcmp(outer_call, name) != 0 ? outer_call : NULL;
  n->backward = fn;
  n->nin = nin;
  for (uint32_t i = 0; i < nin; i++)
    if (in[i] && in[i]->requires_grad) n->in[i] = parity_tensor_retain(in[i]);
  return n;
}

void parity__node_attach(parity_tensor_t *out, parity__node *n) {
  out->node = n;
  out->requires_grad = 1;
}

static void node_free_saved(parity__node *n) {
  for (int i = 0; i < PARITY__NODE_MAX_SAVED; i++) {
    parity_tensor_release(n->saved[i]);
    n->saved[i] = NULL;
  }
}

void parity__node_release(parity__node *n) {
  if (!n || --n->refs > 0) return;
  node_free_saved(n);
  for (uint32_t i = 0; i < n->nin; i++) parity_tensor_release(n->in[i]);
  parity_tensor_release(n->gacc);
  parity__pool_put(&node_pool, n);
}

parity_status_t parity_tensor_set_requires_grad(parity_tensor_t *t, int requires_grad) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "set_requires_grad: tensor is NULL");
  if (requires_grad && !psup_dtype_is_float(t->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "set_requires_grad: only floating tensors can "
                        "require grad; this one is %s",
                        psup_dtype_name(t->dtype));
  if (t->node)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "set_requires_grad: the tensor is the result of %s, "
                        "not a leaf; detach it first",
                        t->node->name);
  t->requires_grad = requires_grad != 0;
  return PARITY_STATUS_OK;
}

int parity_tensor_requires_grad(const parity_tensor_t *t) { return t && t->requires_grad; }
parity_tensor_t *parity_tensor_grad(const parity_tensor_t *t) { return t ? t->grad : NULL; }

void parity_tensor_zero_grad(parity_tensor_t *t) {
  if (!t) return;
  parity_tensor_release(t->grad);
  t->grad = NULL;
}

parity_status_t parity_detach(parity_tensor_t *x, parity_tensor_t **out) {
  if (out) *out = NULL;
  if (!x || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "detach: NULL argument");
  *out = parity__tensor_alias(x);
  return *out ? PARITY_STATUS_OK : parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "detach: out of host memory");
}

/* acc += g, where acc may be NULL. Takes no ownership of g. */
static parity_status_t accumulate(parity_tensor_t **acc, parity_tensor_t *g, int fresh_copy) {
  parity_tensor_t *sum = NULL;
  parity_status_t st;
  if (!*acc) {
    if (!fresh_copy) {
      *acc = parity_tensor_retain(g);
      return PARITY_STATUS_OK;
    }
    /* a gradient nothing else can see (its only reference, the only tensor on its memory, a
     * plain contiguous one) becomes the leaf's gradient as it is: the copy would have the same bits.
     * A plan recording this backward holds the memory too; its replays rewrite it in place, as
     * they would rewrite the copy. */
    if (g->refs == 1 && g->st->refs - g->st->plan_holds == 1 && !g->node && g->offset == 0 &&
        parity_tensor_is_contiguous(g)) {
      *acc = parity__adopt(parity_tensor_retain(g));
      return PARITY_STATUS_OK;
    }
    st = parity__tensor_empty_like(g, &sum);
    if (st == PARITY_STATUS_OK) st = parity__copy_into(sum, g);
  } else {
    st = parity__add_raw(*acc, g, &sum);
  }
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(sum);
    return st;
  }
  parity_tensor_release(*acc);
  *acc = parity__adopt(sum); /* a gradient the library holds: no scope releases it */
  return PARITY_STATUS_OK;
}

typedef struct {
  parity__node **items;
  size_t count, cap;
} node_list;

static int list_push(node_list *l, parity__node *n) {
  if (l->count == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    parity__node **items = realloc(l->items, cap * sizeof *items);
    if (!items) return -1;
    l->items = items;
    l->cap = cap;
  }
  l->items[l->count++] = n;
  return 0;
}

/* Iterative depth-first post-order over nodes reachable from root. */
static int topo_order(parity__node *root, node_list *order) {
  uint64_t mark = atomic_fetch_add(&mark_counter, 1) + 1;
  node_list stack = {0};
  /* a stack entry is a node plus the index of the next parent to visit, packed in two lists */
  size_t *next = NULL, next_cap = 0;
  int rc = 0;
  root->mark = mark;
  if (list_push(&stack, root)) return -1;
  next_cap = 64;
  next = malloc(next_cap * sizeof *next);
  if (!next) {
    free(stack.items);
    return -1;
  }
  next[0] = 0;
  while (stack.count > 0) {
    parity__node *n = stack.items[stack.count - 1];
    size_t *k = &next[stack.count - 1];
    parity__node *child = NULL;
    while (*k < n->nin && !child) {
      parity_tensor_t *in = n->in[(*k)++];
      if (in && in->node && in->node->mark != mark) child = in->node;
    }
    if (child) {
      child->mark = mark;
      if (list_push(&stack, child)) {
        rc = -1;
        break;
      }
      if (stack.count > next_cap) {
        next_cap *= 2;
        size_t *nn = realloc(next, next_cap * sizeof *nn);
        if (!nn) {
          rc = -1;
          break;
        }
        next = nn;
      }
      next[stack.count - 1] = 0;
    } else {
      stack.count--;
      if (list_push(order, n)) {
        rc = -1;
        break;
      }
    }
  }
  free(stack.items);
  free(next);
  return rc;
}

/* Gradient hooks: a hooked leaf counts the graph's edges into it (count_hooked_edges, before the
 * walk); each node processed, with or without a gradient, takes its edges off (leaf_hooks), and
 * the leaf whose count reaches 0 has its final gradient: its hook runs. */
static int hooked_leaf(const parity_tensor_t *in) { return in && !in->node && in->grad_hook; }

static void count_hooked_edges(const node_list *order) {
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < order->count; i++)
      for (uint32_t k = 0; k < order->items[i]->nin; k++) {
        parity_tensor_t *in = order->items[i]->in[k];
        if (hooked_leaf(in)) in->hook_pending = pass ? in->hook_pending + 1 : 0;
      }
}

static parity_status_t leaf_hooks(parity__node *n) {
  parity_status_t st = PARITY_STATUS_OK;
  for (uint32_t k = 0; k < n->nin; k++) {
    parity_tensor_t *in = n->in[k];
    if (!hooked_leaf(in) || in->hook_pending == 0 || --in->hook_pending > 0) continue;
    if (st == PARITY_STATUS_OK) {
      parity__clear_error();
      st = in->grad_hook(in, in->grad_hook_user);
      if (st != PARITY_STATUS_OK && !*parity_last_error())
        parity__fail(st, "backward: a leaf's gradient hook failed (%s)", parity_status_string(st));
    }
  }
  return st;
}

parity_status_t parity_tensor_set_grad_hook(parity_tensor_t *t, parity_grad_hook_fn fn, void *user) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_set_grad_hook: tensor is NULL");
  if (fn && (t->node || !t->requires_grad))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "tensor_set_grad_hook: only a leaf with requires_grad set "
                        "has a gradient of its own (%s)",
                        t->node ? "this tensor was computed" : "requires_grad is off");
  t->grad_hook = fn;
  t->grad_hook_user = fn ? user : NULL;
  return PARITY_STATUS_OK;
}

parity_status_t parity_backward(parity_tensor_t *loss, parity_tensor_t *seed, int retain_graph) {
  if (!loss) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "backward: loss is NULL");
  if (!loss->requires_grad)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "backward: the loss does not require grad (no input "
                        "of the computation has requires_grad set, or it was computed in no-grad mode)");
  char a[96], b[96];
  parity_tensor_t *own_seed = NULL;
  if (seed) {
    if (!parity__same_shape(seed, loss) || seed->dtype != loss->dtype)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "backward: seed %s does not match loss %s",
                          parity__shape_str(seed, a, sizeof a), parity__shape_str(loss, b, sizeof b));
    if (seed->st->dev != loss->st->dev)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "backward: seed and loss live on different devices");
  } else {
    if (parity_tensor_numel(loss) != 1)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "backward: loss %s is not a scalar; pass a seed "
                          "gradient of the same shape",
                          parity__shape_str(loss, a, sizeof a));
    parity_status_t st =
        parity_tensor_full(loss->st->dev, (parity_dtype_t)loss->dtype, loss->rank, loss->shape, 1.0, &own_seed);
    if (st != PARITY_STATUS_OK) return st;
    seed = own_seed;
  }
  int prev_mode = parity_grad_mode_set(0); /* gradients of gradients are not recorded */
  parity_status_t st = PARITY_STATUS_OK;
  if (!loss->node) { /* the loss is itself a leaf */
    st = accumulate(&loss->grad, seed, 1);
    if (st == PARITY_STATUS_OK && loss->grad_hook) st = loss->grad_hook(loss, loss->grad_hook_user);
    goto done;
  }
  node_list order = {0};
  if (topo_order(loss->node, &order)) {
    free(order.items);
    st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "backward: out of host memory");
    goto done;
  }
  /* every node must still hold what it saved */
  for (size_t i = 0; i < order.count; i++)
    if (order.items[i]->freed) {
      st = parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "backward: the graph through %s%s%s%s was freed by an "
                        "earlier backward; pass retain_graph = 1 to the first backward to go through it twice",
                        order.items[i]->call ? order.items[i]->call : order.items[i]->name,
                        order.items[i]->call ? " (its " : "", order.items[i]->call ? order.items[i]->name : "",
                        order.items[i]->call ? " step)" : "");
      free(order.items);
      goto done;
    }
  count_hooked_edges(&order);
  st = accumulate(&loss->node->gacc, seed, 0);
  for (size_t i = order.count; st == PARITY_STATUS_OK && i > 0; i--) {
    parity__node *n = order.items[i - 1];
    parity_tensor_t *gy = n->gacc;
    n->gacc = NULL;
    if (!gy) { /* no gradient reached it */
      st = leaf_hooks(n);
      continue;
    }
    parity_tensor_t *gin[PARITY__NODE_MAX_IN] = {0};
    parity__verify_set_node(n);
    st = n->backward(n, gy, gin);
    parity__verify_set_node(NULL);
    /* dy is spent: released before the gradients are passed on, so a view of its memory (a
     * transpose's gradient) may become a leaf's gradient without a copy */
    parity_tensor_release(gy);
    for (uint32_t k = 0; k < n->nin; k++) {
      parity_tensor_t *in = n->in[k];
      if (st == PARITY_STATUS_OK && in && gin[k]) {
        if (!parity__same_shape(gin[k], in))
          st = parity__fail(PARITY_STATUS_INTERNAL, "backward of %s produced gradient %s for input %s", n->name,
                            parity__shape_str(gin[k], a, sizeof a), parity__shape_str(in, b, sizeof b));
        else if (in->node)
          st = accumulate(&in->node->gacc, gin[k], 0);
        else
          st = accumulate(&in->grad, gin[k], 1);
      }
      parity_tensor_release(gin[k]);
    }
    if (st == PARITY_STATUS_OK) st = leaf_hooks(n);
    if (!retain_graph) {
      node_free_saved(n);
      n->freed = 1;
    }
  }
  for (size_t i = 0; i < order.count; i++) { /* after an error, drop partial sums */
    parity_tensor_release(order.items[i]->gacc);
    order.items[i]->gacc = NULL;
  }
  free(order.items);
done:
  parity_grad_mode_set(prev_mode);
  parity_tensor_release(own_seed);
  return st;
}

/* Backward of ops whose plugin backward takes {x, y, dy} and gives dx (unary, reduce, pool). */
static parity_status_t xy_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *dx;
  parity_status_t st = parity__tensor_empty_like(n->saved[0], &dx);
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[3] = {n->saved[0], n->saved[1], gy}, *o[1] = {dx};
  st = parity__launch(dx->st->dev, n->op, PARITY_DIRECTION_BACKWARD, in, 3, o, 1, &n->params);
  return parity__finish(st, dx, &gin[0]);
}

parity_status_t parity__record_xy(int32_t op, const char *name, parity_tensor_t *x, parity_tensor_t *y,
                                  const parity_op_params_t *params) {
  if (!parity__any_requires_grad(&x, 1)) return PARITY_STATUS_OK;
  parity__node *n = parity__node_new(name, xy_backward, 1, &x);
  if (!n) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", name);
  n->op = op;
  if (params) n->params = *params;
  n->saved[0] = parity__adopt(parity__tensor_alias(x));
  n->saved[1] = parity__adopt(parity__tensor_alias(y));
  parity__node_attach(y, n);
  return PARITY_STATUS_OK;
}
