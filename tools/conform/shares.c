/* shares.c — `--shard K/N`: the selected cases dealt into N shares of about equal work. A case's
 * work is estimated from the elements it stores (an input's are written and read back; an output's
 * are also converted and compared with the oracle's, about ten times an input's in a --full sweep:
 * sum over 2^31 bools took 24 s, exp over 2^24 floats 2.2 s; a backward case about twice its
 * forward's) plus a fixed cost per case; the largest case goes first, each to the share
 * with the least work so far (ties to the lowest share), so the few cases of 2^24 and 2^31
 * elements, which are most of a --full sweep's time, spread over the shares instead of falling in
 * whichever share their row's position chose. Every share computes the same deal. */
#include <stdlib.h>

#include "conform.h"

#define CASE_FIXED_COST 262144.0 /* one case's set-up and checks, in stored input elements (~3 ms) */
#define OUTPUT_WEIGHT 10.0       /* an output element against an input element */

double cf_case_cost(const cf_case_t *c) {
  double e = 0;
  for (uint32_t i = 0; i < c->nin; i++)
    if (c->has_in[i]) e += (double)cf_spec_stored(&c->in[i]);
  for (uint32_t i = 0; i < c->nout; i++) e += OUTPUT_WEIGHT * (double)cf_spec_stored(&c->out[i]);
  if (c->direction == PARITY_DIRECTION_BACKWARD) e *= 2;
  return e + CASE_FIXED_COST;
}

typedef struct ranked_t {
  double cost;
  size_t index;
} ranked_t;

static int by_cost_desc(const void *a, const void *b) {
  const ranked_t *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

int cf_cases_keep_share(const cf_case_list_t *cases, unsigned char *selected, uint32_t share, uint32_t shares) {
  if (shares <= 1) return 0;
  size_t n = 0;
  for (size_t i = 0; i < cases->count; i++) n += selected[i] != 0;
  ranked_t *r = malloc((n ? n : 1) * sizeof *r);
  double *load = calloc(shares, sizeof *load);
  if (!r || !load) {
    free(r);
    free(load);
    return -1;
  }
  n = 0;
  for (size_t i = 0; i < cases->count; i++)
    if (selected[i]) r[n++] = (ranked_t){cf_case_cost(&cases->items[i]), i};
  qsort(r, n, sizeof *r, by_cost_desc);
  for (size_t j = 0; j < n; j++) {
    uint32_t best = 0;
    for (uint32_t s = 1; s < shares; s++)
      if (load[s] < load[best]) best = s;
    load[best] += r[j].cost;
    selected[r[j].index] = best == share;
  }
  free(r);
  free(load);
  return 0;
}
