/* pool.c — free lists for per-op host structs (pool.h). Each thread keeps a few objects of
 * every pool in a cache of its own (no atomics on the common path); the shared list behind it
 * takes the overflow, and a thread's cache goes back to it when the thread exits. */
#include "pool.h"

#include <pthread.h>
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

#define LOCAL_MAX 32
#define DELAY 256
typedef struct local_cache {
  parity__pool *pool;
  uint32_t count;
  void *items[LOCAL_MAX];
  void *ring[DELAY]; /* parity__pool_put_delayed: the last DELAY objects, oldest at ring_pos */
  uint32_t ring_pos;
} local_cache;
static _Thread_local local_cache local[PARITY__POOL_KINDS];
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void lock(parity__pool *p) {
  while (atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire)) {}
}
static void unlock(parity__pool *p) { atomic_flag_clear_explicit(&p->lock, memory_order_release); }

static void **link_of(const parity__pool *p, void *obj) { return (void **)((char *)obj + p->link_off); }

static void shared_put(parity__pool *p, void *obj) {
  lock(p);
  if (p->count < p->max) {
    *link_of(p, obj) = p->head;
    p->head = obj;
    p->count++;
    obj = NULL;
  }
  unlock(p);
  free(obj);
}

static void flush_thread(void *unused) { /* thread exit: hand the cache (and the delay ring) back */
  (void)unused;
  for (int k = 0; k < PARITY__POOL_KINDS; k++) {
    local_cache *c = &local[k];
    for (uint32_t i = 0; i < DELAY; i++)
      if (c->ring[i]) {
        void *obj = c->ring[i];
        c->ring[i] = NULL;
        parity__pool_put(c->pool, obj); /* frees where pools are off */
      }
    while (c->count) shared_put(c->pool, c->items[--c->count]);
  }
}
static void make_key(void) { pthread_key_create(&exit_key, flush_thread); }

void *parity__pool_get(parity__pool *p) {
  void *obj = NULL;
  if (POOLS_ON) {
    local_cache *c = &local[p->kind];
    if (c->count) {
      obj = c->items[--c->count];
    } else {
      lock(p);
      obj = p->head;
      if (obj) {
        p->head = *link_of(p, obj);
        p->count--;
      }
      unlock(p);
    }
  }
  if (!obj) return calloc(1, p->size);
  memset(obj, 0, p->size);
  return obj;
}

static local_cache *cache_of(parity__pool *p) {
  local_cache *c = &local[p->kind];
  if (!c->pool) { /* first use on this thread: make sure the cache is handed back at exit */
    pthread_once(&exit_once, make_key);
    pthread_setspecific(exit_key, local);
    c->pool = p;
  }
  return c;
}

void parity__pool_put_delayed(parity__pool *p, void *obj) {
  local_cache *c = cache_of(p);
  void *old = c->ring[c->ring_pos];
  c->ring[c->ring_pos] = obj;
  c->ring_pos = (c->ring_pos + 1) % DELAY;
  parity__pool_put(p, old);
}

void parity__pool_put(parity__pool *p, void *obj) {
  if (!obj) return;
  if (!POOLS_ON) {
    free(obj);
    return;
  }
  local_cache *c = cache_of(p);
  if (c->count < LOCAL_MAX) {
    c->items[c->count++] = obj;
    return;
  }
  shared_put(p, obj);
}
