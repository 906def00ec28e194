/* hazard_tape.h — helpers for the hazard cases that run whole graphs through the autodiff tape
 * (layer zoo, trajectories, eager vs replay, low-precision log_softmax after conv). Each runs
 * the same computation on the device under test and on the CPU oracle from identical inputs. */
#ifndef PARITY_CONFORM_HAZARD_TAPE_H
#define PARITY_CONFORM_HAZARD_TAPE_H

#include "conform.h"

/* Deterministic values in [-scale, scale], already rounded to dtype (so every device sees the
 * same numbers). */
void ht_values(double *v, int64_t n, uint64_t seed, double scale, int32_t dtype);
/* Tensor of dtype on dev with the given values; NULL (status in *st) on failure. */
parity_tensor_t *ht_tensor(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape, const double *v,
                           int requires_grad, parity_status_t *st);
/* All values of t as doubles (malloc'ed, *n elements); NULL on failure. */
double *ht_read(parity_tensor_t *t, int64_t *n);
/* Worst |got - ref| / (atol + rtol |ref|) over n elements (NaN pairs match); cosine and norm
 * ratio ||got|| / ||ref|| go to *cos and *ratio when not NULL. */
double ht_compare(const double *got, const double *ref, int64_t n, double atol, double rtol, double *cos,
                  double *ratio);
/* Record a failed parity call: UNSUPPORTED when the device said so, FAIL otherwise. */
void ht_call_failed(cf_result_t *r, parity_status_t st, const char *what);
/* The dtype label of a result. */
void ht_set_dtype(cf_result_t *r, int32_t dtype);

#endif
