/* grow.h — room for one more element in a growable array, for the plugins' lists (a plan's
 * commands and scratch buffers, staged host copies). */
#ifndef PARITY_SUPPORT_GROW_H
#define PARITY_SUPPORT_GROW_H

#include <stddef.h>
#include <stdint.h>

/* `arrp` is the address of the array pointer (T **), `*cap` its capacity, `n` the elements in use.
 * When n == *cap the array is reallocated to twice the capacity (`first` when it is 0). Returns 1
 * with room for element n, 0 when out of host memory (array and capacity unchanged). */
int psup_grow(void *arrp, uint32_t *cap, uint32_t n, size_t elem, uint32_t first);

#endif
