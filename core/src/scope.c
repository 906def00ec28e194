/* scope.c — scopes: every tensor this thread creates between parity_scope_begin and the matching
 * parity_scope_end is released at the end unless kept (tensor.h). A scope is a list of tensors;
 * a tensor remembers its scope level and slot, so releasing it early clears the slot, and the
 * library's own holders (saved tensors, gradients, optimizer state) take theirs out with
 * parity__adopt. */
#include <stdlib.h>

#include "tensor_internal.h"

#define MAX_DEPTH 64

typedef struct scope {
  parity_tensor_t **items;
  uint32_t count, cap;
} scope;

static _Thread_local scope stack[MAX_DEPTH];
static _Thread_local uint32_t depth;

static int push(scope *s, parity_tensor_t *t, uint32_t level) {
  if (s->count == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 32;
    parity_tensor_t **items = realloc(s->items, cap * sizeof *items);
    if (!items) return -1;
    s->items = items;
    s->cap = cap;
  }
  t->scope_level = level;
  t->scope_slot = s->count;
  s->items[s->count++] = t;
  return 0;
}

void parity__scope_register(parity_tensor_t *t) {
  /* out of host memory for the list: the tensor stays the caller's to release, as outside a scope */
  if (depth) (void)push(&stack[depth - 1], t, depth);
}

void parity__scope_forget(parity_tensor_t *t) {
  if (!t->scope_level) return;
  /* only this thread's scopes hold tensors; a level beyond this thread's depth is another
   * thread's (a documented misuse) and is left alone */
  if (t->scope_level <= depth) {
    scope *s = &stack[t->scope_level - 1];
    if (t->scope_slot < s->count && s->items[t->scope_slot] == t) s->items[t->scope_slot] = NULL;
  }
  t->scope_level = 0;
}

parity_tensor_t *parity__adopt(parity_tensor_t *t) {
  if (t) parity__scope_forget(t);
  return t;
}

parity_status_t parity_scope_begin(void) {
  if (depth == MAX_DEPTH)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "scope_begin: %d scopes are already open on this "
                        "thread (the most); end one first",
                        MAX_DEPTH);
  stack[depth] = (scope){0};
  depth++;
  return PARITY_STATUS_OK;
}

parity_status_t parity_scope_end(void) {
  if (!depth) return parity__fail(PARITY_STATUS_FAILED_PRECONDITION, "scope_end: no scope is open on this thread");
  scope *s = &stack[depth - 1];
  /* releasing one tensor may free others of this scope: their slots are cleared as they go */
  for (uint32_t i = 0; i < s->count; i++) {
    parity_tensor_t *t = s->items[i];
    if (!t) continue;
    s->items[i] = NULL;
    t->scope_level = 0;
    parity_tensor_release(t);
  }
  free(s->items);
  *s = (scope){0};
  depth--;
  return PARITY_STATUS_OK;
}

parity_status_t parity_scope_keep(parity_tensor_t *t) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "scope_keep: tensor is NULL");
  if (t->magic != PARITY__TENSOR_LIVE)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "scope_keep: the tensor was already released");
  if (!t->scope_level || t->scope_level > depth)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "scope_keep: the tensor belongs to no open scope of "
                        "this thread (made outside every scope, or kept already)");
  uint32_t level = t->scope_level;
  parity__scope_forget(t);
  if (level > 1 && push(&stack[level - 2], t, level - 1) != 0)
    return parity__fail(PARITY_STATUS_OUT_OF_MEMORY,
                        "scope_keep: out of host memory; the tensor is now the "
                        "caller's to release");
  return PARITY_STATUS_OK;
}

uint32_t parity_scope_depth(void) { return depth; }
