/* common.h — helpers shared by parity-train's files. */
#ifndef PARITY_TRAIN_COMMON_H
#define PARITY_TRAIN_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "parity/parity.h"

/* A device or core failure ends the run with exit status 1 and the core's message. */
#define CHECK(expr)                                                                 \
  do {                                                                              \
    if ((expr) != PARITY_STATUS_OK) {                                               \
      fprintf(stderr, "parity-train: %s failed: %s\n", #expr, parity_last_error()); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static inline double train_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
