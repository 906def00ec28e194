/* synthetic.h — parity-train's generated-data mode (no dataset needed): a small MLP and CNN whose
 * inputs and weights come from the counter-based generator, so the same seed gives the same loss
 * curve on every backend. */
#ifndef PARITY_TRAIN_SYNTHETIC_H
#define PARITY_TRAIN_SYNTHETIC_H

#include <stdint.h>

#include "parity/parity.h"

/* Linear(8,32) -> tanh -> Linear(32,4), MSE against sin of a fixed teacher projection; Adam. */
void synthetic_train_mlp(parity_device_t *dev, parity_dtype_t dt, int steps, uint64_t seed, double lr);
/* Conv(1->4, 3x3, pad 1) -> relu -> max_pool 2 -> Linear(64 -> 3), cross-entropy against the
 * softmax of a fixed teacher's logits; Adam. */
void synthetic_train_cnn(parity_device_t *dev, parity_dtype_t dt, int steps, uint64_t seed, double lr);

#endif
