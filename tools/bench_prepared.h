/* bench_prepared.h — parity-bench's prepared-step figures (bench_prepared.c). */
#ifndef PARITY_BENCH_PREPARED_H
#define PARITY_BENCH_PREPARED_H

#include "parity/parity.h"

/* Print the eager and replayed Dense(2,2) gradient, the 2-element add and the host floor, in
 * microseconds; 1 when it ran. */
int bench_prepared(parity_device_t *dev);

#endif
