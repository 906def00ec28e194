/* random.c — counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). Values are
 * generated on the host from (seed, offset + index) and uploaded, so every backend sees the
 * same numbers for the same seed. */
#include <math.h>
#include <stdlib.h>

#include "parity_support/shape.h"
#include "tensor_internal.h"

static void philox4x32_10(uint32_t ctr[4], const uint32_t key_in[2]) {
  uint32_t key[2] = {key_in[0], key_in[1]};
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
    uint32_t c0 = (uint32_t)(p1 >> 32) ^ ctr[1] ^ key[0], c1 = (uint32_t)p1;
    uint32_t c2 = (uint32_t)(p0 >> 32) ^ ctr[3] ^ key[1], c3 = (uint32_t)p0;
    ctr[0] = c0;
    ctr[1] = c1;
    ctr[2] = c2;
    ctr[3] = c3;
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
}

/* Four uniform doubles in (0, 1) from counter `index` of stream `seed`. */
static void uniform4(uint64_t seed, uint64_t index, double out[4]) {
  uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), 0, 0};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  philox4x32_10(ctr, key);
  for (int i = 0; i < 4; i++) out[i] = ((double)ctr[i] + 0.5) * 0x1p-32;
}

/* Element i of a stream with offset: block (offset+i)/4, lane (offset+i)%4. */
static double uniform_at(uint64_t seed, uint64_t pos) {
  double u[4];
  uniform4(seed, pos / 4, u);
  return u[pos % 4];
}

static parity_status_t make(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape, int normal,
                            double a, double b, uint64_t seed, uint64_t offset, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "rand: out is NULL");
  *out = NULL;
  if (dtype != PARITY_DTYPE_F32 && dtype != PARITY_DTYPE_F64 && dtype != PARITY_DTYPE_F16 && dtype != PARITY_DTYPE_BF16)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "rand: dtype must be floating, got %d", dtype);
  if (normal && (!isfinite(a) || !isfinite(b) || b < 0))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "rand_normal: mean %g and stddev %g must be finite, stddev >= 0", a, b);
  if (!normal && (!isfinite(a) || !isfinite(b) || a > b || !isfinite(b - a)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "rand_uniform: low %g and high %g must be finite with low <= "
                        "high",
                        a, b);
  int64_t n;
  char msg[160];
  if (psup_shape_check("rand", rank, shape, &n, msg, sizeof msg) != PARITY_STATUS_OK)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  double *v = malloc(n > 0 ? (size_t)n * sizeof *v : 1);
  if (!v) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "rand: out of host memory");
  for (int64_t i = 0; i < n; i++) {
    uint64_t pos = offset + (uint64_t)i;
    if (normal) { /* Box-Muller on two uniforms from two positions of a second stream */
      double u1 = uniform_at(seed, 2 * pos), u2 = uniform_at(seed, 2 * pos + 1);
      v[i] = a + b * sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
    } else {
      v[i] = a + (b - a) * uniform_at(seed, pos);
    }
  }
  parity_status_t st = parity_tensor_from_f64(dev, dtype, rank, shape, v, out);
  free(v);
  return st;
}

parity_status_t parity_tensor_rand_uniform(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                           const int64_t *shape, double low, double high, uint64_t seed,
                                           uint64_t offset, parity_tensor_t **out) {
  return make(dev, dtype, rank, shape, 0, low, high, seed, offset, out);
}

parity_status_t parity_tensor_rand_normal(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                          const int64_t *shape, double mean, double stddev, uint64_t seed,
                                          uint64_t offset, parity_tensor_t **out) {
  return make(dev, dtype, rank, shape, 1, mean, stddev, seed, offset, out);
}

parity_status_t parity_init_weight(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                   parity_init_t kind, double gain, parity_generator_t *gen, parity_tensor_t **out) {
  if (out) *out = NULL;
  if (!gen || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "init_weight: NULL argument");
  if (rank < 2 || !shape)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "init_weight: rank %u; a weight has rank >= 2 ([out, in, ...])",
                        rank);
  if (!(gain > 0 && isfinite(gain)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "init_weight: gain %g must be a finite number > 0", gain);
  int64_t n;
  char msg[160];
  if (psup_shape_check("init_weight", rank, shape, &n, msg, sizeof msg) != PARITY_STATUS_OK)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  double receptive = 1;
  for (uint32_t i = 2; i < rank; i++) receptive *= (double)shape[i];
  double fan_in = (double)shape[1] * receptive, fan_out = (double)shape[0] * receptive;
  if (fan_in <= 0 || fan_out <= 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "init_weight: a weight with an empty axis has no fan");
  parity_status_t st;
  switch (kind) {
    case PARITY_INIT_XAVIER_UNIFORM: {
      double a = gain * sqrt(6.0 / (fan_in + fan_out));
      st = parity_tensor_rand_uniform(dev, dtype, rank, shape, -a, a, gen->seed, gen->offset, out);
      break;
    }
    case PARITY_INIT_XAVIER_NORMAL:
      st = parity_tensor_rand_normal(dev, dtype, rank, shape, 0, gain * sqrt(2.0 / (fan_in + fan_out)), gen->seed,
                                     gen->offset, out);
      break;
    case PARITY_INIT_KAIMING_UNIFORM: {
      double a = gain * sqrt(3.0 / fan_in);
      st = parity_tensor_rand_uniform(dev, dtype, rank, shape, -a, a, gen->seed, gen->offset, out);
      break;
    }
    case PARITY_INIT_KAIMING_NORMAL:
      st = parity_tensor_rand_normal(dev, dtype, rank, shape, 0, gain / sqrt(fan_in), gen->seed, gen->offset, out);
      break;
    default: return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "init_weight: unknown initialiser %d", (int)kind);
  }
  if (st == PARITY_STATUS_OK) gen->offset += (uint64_t)n;
  return st;
}
