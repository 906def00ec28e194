/* siphash.c — SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed 64-bit hash that
 * authenticates cache files (cachefile.c): see siphash.h. The reference algorithm, little-endian
 * words; tests/core/test_cachefile.c checks the paper's test vectors. */
#include "parity_support/siphash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND()                                            \
  do {                                                        \
    v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32); \
    v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                    \
    v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                    \
    v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32); \
  } while (0)

static uint64_t load_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

void psup_siphash_init(psup_siphash_t *s, const unsigned char key[16]) {
  uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
  s->v[0] = 0x736f6d6570736575ull ^ k0;
  s->v[1] = 0x646f72616e646f6dull ^ k1;
  s->v[2] = 0x6c7967656e657261ull ^ k0;
  s->v[3] = 0x7465646279746573ull ^ k1;
  s->fill = 0;
  s->total = 0;
}

static void compress(psup_siphash_t *s, uint64_t m) {
  uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
  v3 ^= m;
  SIPROUND();
  SIPROUND();
  v0 ^= m;
  s->v[0] = v0, s->v[1] = v1, s->v[2] = v2, s->v[3] = v3;
}

void psup_siphash_update(psup_siphash_t *s, const void *data, size_t n) {
  const unsigned char *p = data;
  s->total += n;
  while (n) {
    size_t take = 8 - s->fill < n ? 8 - s->fill : n;
    memcpy(s->buf + s->fill, p, take);
    s->fill += take, p += take, n -= take;
    if (s->fill == 8) {
      compress(s, load_le64(s->buf));
      s->fill = 0;
    }
  }
}

uint64_t psup_siphash_final(psup_siphash_t *s) {
  unsigned char last[8] = {0};
  memcpy(last, s->buf, s->fill);
  last[7] = (unsigned char)s->total;
  compress(s, load_le64(last));
  uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2] ^ 0xff, v3 = s->v[3];
  for (int i = 0; i < 4; i++) SIPROUND();
  return v0 ^ v1 ^ v2 ^ v3;
}
