/* siphash.h — SipHash-2-4, a keyed 64-bit hash: with a secret 128-bit key, nobody without the key
 * can make data that hashes to a chosen value. The cache files (cachefile.h) carry one, keyed by a
 * secret only this user can read, so a file parity did not write on this account is refused before
 * any driver sees it. */
#ifndef PARITY_SUPPORT_SIPHASH_H
#define PARITY_SUPPORT_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct psup_siphash_t {
  uint64_t v[4];
  unsigned char buf[8];
  size_t fill;
  uint64_t total;
} psup_siphash_t;

void psup_siphash_init(psup_siphash_t *s, const unsigned char key[16]);
void psup_siphash_update(psup_siphash_t *s, const void *data, size_t n);
uint64_t psup_siphash_final(psup_siphash_t *s);

#endif
