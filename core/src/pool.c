/* pool.c — free lists for per-op host structs (pool.h). */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define POOLS_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOLS_ON 0
#endif
#endif
#ifndef POOLS_ON
#define POOLS_ON 1
#endif

static void lock(parity__pool *p) {
  while (atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire)) {
  }
}
static void unlock(parity__pool *p) { atomic_flag_clear_explicit(&p->lock, memory_order_release); }

static void **link_of(const parity__pool *p, void *obj) { return (void **)((char *)obj + p->link_off); }

void *parity__pool_get(parity__pool *p) {
  void *obj = NULL;
  if (POOLS_ON) {
    lock(p);
    obj = p->head;
    if (obj) {
      p->head = *link_of(p, obj);
      p->count--;
    }
    unlock(p);
  }
  if (!obj) {
    atomic_fetch_add_explicit(&p->misses, 1, memory_order_relaxed);
    return calloc(1, p->size);
  }
  atomic_fetch_add_explicit(&p->hits, 1, memory_order_relaxed);
  memset(obj, 0, p->size);
  return obj;
}

void parity__pool_put(parity__pool *p, void *obj) {
  if (!obj) return;
  if (POOLS_ON) {
    lock(p);
    if (p->count < p->max) {
      *link_of(p, obj) = p->head;
      p->head = obj;
      p->count++;
      obj = NULL;
    }
    unlock(p);
  }
  free(obj);
}
