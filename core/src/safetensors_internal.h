/* safetensors_internal.h — the named-tensor checks that parity_load_safetensors and the checkpoint
 * functions share (safetensors_tensors.c). */
#ifndef PARITY_SAFETENSORS_INTERNAL_H
#define PARITY_SAFETENSORS_INTERNAL_H

#include "parity/safetensors.h"

/* names and tensors present, each name non-empty, short enough and given once. */
parity_status_t parity__st_check_names(const char *call, const char *const *names, parity_tensor_t *const *tensors,
                                       size_t n);
/* The file holds `name` with t's dtype and shape, and t can be written (contiguous, not a plan's). */
parity_status_t parity__st_check_entry(const char *call, const char *path, const parity_st_file *f, const char *name,
                                       const parity_tensor_t *t);

#endif
