/* models.h — the Fashion-MNIST models of parity-train (architectures in docs/training.md): their
 * parameters, seeded initialisation, forward pass, loss, one gradient computation, and weights
 * in safetensors. A training step is model_grad() then parity_optimizer_step(); a data-parallel
 * mode can all-reduce every parameter's .grad between the two. */
#ifndef PARITY_TRAIN_MODELS_H
#define PARITY_TRAIN_MODELS_H

#include <stddef.h>
#include <stdio.h>

#include "parity/parity.h"

#define MODEL_MAX_PARAMS 8
#define MODEL_IMAGE_SIDE 28
#define MODEL_CLASSES 10

typedef enum model_kind { MODEL_MLP, MODEL_CNN } model_kind;

typedef struct model {
  model_kind kind;
  parity_dtype_t dtype;
  uint32_t count;
  parity_tensor_t *param[MODEL_MAX_PARAMS]; /* requires_grad leaves on the device */
  const char *name[MODEL_MAX_PARAMS];       /* "fc1.weight", ... (PyTorch's names) */
  uint32_t rank[MODEL_MAX_PARAMS];
  int64_t shape[MODEL_MAX_PARAMS][4];
} model;

const char *model_kind_name(model_kind k);

/* Create the parameters on dev: weights N(0, gain^2 / fan_in) from the counter-based generator
 * (seed, offset (index + 1) << 32), biases zero. Exits with a message on a device failure. */
void model_init(model *m, model_kind kind, parity_device_t *dev, parity_dtype_t dtype, uint64_t seed);
void model_release(model *m);

/* x: [N, 1, 28, 28] of the model's dtype -> logits [N, 10]. Caller releases *logits. */
parity_status_t model_forward(const model *m, parity_tensor_t *x, parity_tensor_t **logits);

/* Zero the gradients, run forward and the cross-entropy loss against the one-hot target [N, 10],
 * and backward seeded with grad_scale: every parameter's .grad then holds
 * grad_scale * d(mean loss)/d(param). *loss gets the (unscaled) loss. With SGD, grad_scale is the
 * learning-rate schedule's factor (the core's optimizers have a fixed learning rate). */
parity_status_t model_grad(model *m, parity_tensor_t *x, parity_tensor_t *target, double grad_scale, double *loss);

/* Save every parameter (dtype F32, F16, BF16 or F64 as the model's) with metadata naming the
 * model ("parity.model") and the checksum, to `path` through the atomic writer: the old file or
 * the new one, whatever happens. 0, or -1 with the reason in err. */
int model_save(const model *m, const char *path, char *err, size_t errlen);

/* Replace the parameters' values from a safetensors file, which must hold exactly this model's
 * tensors with its dtype and shapes; metadata naming another model, a checksum that does not
 * match, and NaN or Inf values (unless allow_nonfinite) are refused. A file without parity's
 * checksum is read with a note in `note` (else note is ""). 0, or -1 with the reason in err (the
 * model unchanged). */
int model_load(model *m, const char *path, int allow_nonfinite, char *note, size_t notelen, char *err, size_t errlen);

#endif
