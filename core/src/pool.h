/* pool.h — free lists for the host structs made once or more per op (tensors, autodiff nodes,
 * storages), so an eager op or a released temporary costs no malloc/free in the steady state.
 * A pool keeps at most `max` objects in a shared list (a spin lock held for a pointer swap) plus
 * a few per thread; the rest go back to the heap. Thread-safe. Objects come back zeroed. Under AddressSanitizer pools are off, so
 * a use after release still shows as one. */
#ifndef PARITY_POOL_H
#define PARITY_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* one pool of each kind; each thread caches a few objects of every kind */
enum { PARITY__POOL_TENSOR, PARITY__POOL_NODE, PARITY__POOL_STORAGE, PARITY__POOL_KINDS };

typedef struct parity__pool {
  atomic_flag lock;
  int kind;
  size_t size;     /* object size */
  size_t link_off; /* where a pooled object keeps the next pointer */
  uint32_t max, count;
  void *head;
} parity__pool;

#define PARITY__POOL_INIT(kind, type, link_member, max_) \
  { ATOMIC_FLAG_INIT, (kind), sizeof(type), offsetof(type, link_member), (max_), 0, NULL }

void *parity__pool_get(parity__pool *p); /* zeroed; NULL when out of host memory */
void parity__pool_put(parity__pool *p, void *obj);
/* Put obj back only after this thread has put back 256 more this way: until then its memory
 * stays as the caller left it (released tensors stay marked dead, so a double release is seen).
 * Also under AddressSanitizer, where the delayed put then frees. */
void parity__pool_put_delayed(parity__pool *p, void *obj);

#endif
