/* fuzz_shape — shape arithmetic through the public API on the CPU plugin: creation, reshape,
 * expand, slice, permute, transpose, squeeze, unsqueeze and a sum of whatever results, driven by
 * the input bytes. Every call must return a status (never crash, overflow, or allocate past the
 * documented 2^48-element limit), and every tensor that exists must sum to what its elements say. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"
#include "parity_support/shape.h"

static parity_device_t *dev;

static int64_t take(const uint8_t **d, size_t *n) {
  int64_t v = 0;
  size_t k = *n < 8 ? *n : 8;
  memcpy(&v, *d, k);
  *d += k;
  *n -= k;
  /* mostly small sizes, sometimes anything */
  uint8_t sel = (uint8_t)v;
  if (sel < 200) return (int64_t)((uint64_t)v >> 8) % 7 - (sel < 8 ? 1 : 0);
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dev) {
    parity_context_options_t o;
    parity_context_options_init(&o);
    o.backend = "cpu";
    o.log_level = 0;
    parity_context_t *ctx;
    if (parity_context_create(&o, &ctx) != PARITY_STATUS_OK ||
        parity_context_default_device(ctx, &dev) != PARITY_STATUS_OK) {
      fprintf(stderr, "fuzz_shape: no CPU device: %s\n", parity_last_error());
      abort();
    }
  }
  if (size < 2) return 0;
  uint32_t rank = data[0] % 5;
  data++, size--;
  int64_t shape[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < rank; i++) shape[i] = take(&data, &size) & 7;
  parity_tensor_t *x = NULL;
  if (parity_tensor_ones(dev, PARITY_DTYPE_F32, rank, shape, &x) != PARITY_STATUS_OK) return 0;
  for (int step = 0; step < 6 && size > 0; step++) {
    uint8_t op = data[0] % 8;
    data++, size--;
    parity_tensor_t *y = NULL;
    int64_t s[PARITY_MAX_RANK];
    uint32_t r = (uint32_t)(take(&data, &size) & 7);
    if (r > PARITY_MAX_RANK) r = PARITY_MAX_RANK;
    for (uint32_t i = 0; i < r; i++) s[i] = take(&data, &size);
    int32_t axes[PARITY_MAX_RANK]; /* -9..9: negative, in range and out of range */
    for (uint32_t i = 0; i < PARITY_MAX_RANK; i++) axes[i] = (int32_t)((uint64_t)s[i % (r ? r : 1)] % 19) - 9;
    /* reshape (so squeeze and unsqueeze) and contiguous may copy: only on tensors small enough to allocate here (the views
     * themselves are checked at any size) */
    if ((op == 0 || op == 5 || op == 6 || op == 7) && parity_tensor_numel(x) > (1 << 20)) continue;
    parity_status_t st;
    switch (op) {
      case 0: st = parity_reshape(x, r, s, &y); break;
      case 1: st = parity_expand(x, r, s, &y); break;
      case 2: st = parity_slice(x, axes[0], s[1], s[2], s[3], &y); break;
      case 3: st = parity_permute(x, axes, &y); break;
      case 4: st = parity_transpose(x, axes[0], axes[1], &y); break;
      case 5: st = parity_squeeze(x, axes[0], &y); break;
      case 6: st = parity_unsqueeze(x, axes[0], &y); break;
      default: st = parity_contiguous(x, &y); break;
    }
    if (st != PARITY_STATUS_OK) {
      if (y) abort();                       /* *out is NULL on failure */
      if (!parity_last_error()[0]) abort(); /* and there is a message */
      continue;
    }
    parity_tensor_release(x);
    x = y;
  }
  int64_t n = parity_tensor_numel(x);
  if (n < 0 || n > PSUP_MAX_NUMEL) abort();
  if (n <= (1 << 16)) { /* a view of ones sums to its element count */
    parity_tensor_t *sum;
    if (parity_reduce(PARITY_OP_SUM, x, (1u << parity_tensor_rank(x)) - 1, 0, &sum) == PARITY_STATUS_OK) {
      double v;
      if (parity_tensor_to_f64(sum, &v, 1) != PARITY_STATUS_OK || v != (double)n) abort();
      parity_tensor_release(sum);
    }
  }
  parity_tensor_release(x);
  return 0;
}
