/* grow.c — psup_grow (grow.h). */
#include "parity_support/grow.h"

#include <stdlib.h>
#include <string.h>

int psup_grow(void *arrp, uint32_t *cap, uint32_t n, size_t elem, uint32_t first) {
  if (n < *cap) return 1;
  if (*cap > UINT32_MAX / 2) return 0;
  uint32_t c = *cap ? *cap * 2 : (first ? first : 1);
  if (elem && c > SIZE_MAX / elem) return 0;
  void *old;
  memcpy(&old, arrp, sizeof old);
  void *grown = realloc(old, (size_t)c * elem);
  if (!grown) return 0;
  memcpy(arrp, &grown, sizeof grown);
  *cap = c;
  return 1;
}
