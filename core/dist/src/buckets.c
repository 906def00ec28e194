/* buckets.c — gradient buckets: parameters grouped (in reverse order) into buckets of about a
 * given size, each all-reduced as soon as all its gradients are ready, overlapping the rest of
 * backward; the same deterministic all-reduce as parity_dist_allreduce (dist.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"
#include "parity_support/dtype.h"

/* ---- buckets ----------------------------------------------------------------------------------- */
typedef struct bucket_t {
  uint32_t first, count; /* into b->order */
  uint32_t ready;
  uint64_t elems;
  char *buf;
  parity_tensor_t **grads; /* borrowed at ready time */
  ar_t ar;
} bucket_t;

struct parity_dist_buckets_t {
  parity_dist_t *d;
  parity_tensor_t **params;
  uint32_t count, nb;
  uint32_t *order;     /* parameters in bucket order (reverse) */
  uint32_t *bucket_of; /* parameter -> bucket */
  uint8_t *is_ready;
  bucket_t *b;
  parity_dtype_t dt;
  parity_dist_op_t op;
};

uint32_t parity_dist_buckets_count(const parity_dist_buckets_t *b) { return b ? b->nb : 0; }

void parity_dist_buckets_destroy(parity_dist_buckets_t *b) {
  if (!b) return;
  for (uint32_t i = 0; i < b->nb; i++) {
    free(b->b[i].buf);
    free(b->b[i].grads);
    dist_ar_free(&b->b[i].ar);
  }
  free(b->b);
  free(b->params);
  free(b->order);
  free(b->bucket_of);
  free(b->is_ready);
  free(b);
}

parity_status_t parity_dist_buckets_create(parity_dist_t *d, parity_tensor_t *const *params, uint32_t n,
                                           uint64_t bucket_bytes, parity_dist_op_t op, parity_dist_buckets_t **out) {
  if (!d || !out || !n)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_buckets_create: no context, output or parameters");
  *out = NULL;
  desc_t *dd;
  parity_status_t st = dist_describe_all(params, n, &dd, "buckets_create");
  if (st) return st;
  st = dist_check_signature(d, KIND_BUCKETS, 0, op, dd, n,
                            bucket_bytes > 0xffffffffu ? 0xffffffffu : (uint32_t)bucket_bytes);
  free(dd);
  if (st) return st;
  parity_dtype_t dt = parity_tensor_dtype(params[0]);
  for (uint32_t i = 0; i < n; i++)
    if (parity_tensor_dtype(params[i]) != dt || !dsum_is_float(dt))
      return dist_fail(PARITY_STATUS_UNSUPPORTED,
                       "buckets_create: parameter %u is %s, parameter 0 is %s: one float dtype", i,
                       psup_dtype_name(parity_tensor_dtype(params[i])), psup_dtype_name(dt));
  parity_dist_buckets_t *b = calloc(1, sizeof *b);
  if (!b) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "buckets_create: out of memory");
  b->d = d;
  b->count = n;
  b->dt = dt;
  b->op = op;
  b->params = calloc(n, sizeof *b->params);
  b->order = calloc(n, sizeof *b->order);
  b->bucket_of = calloc(n, sizeof *b->bucket_of);
  b->is_ready = calloc(n, 1);
  b->b = calloc(n, sizeof *b->b);
  if (!b->params || !b->order || !b->bucket_of || !b->is_ready || !b->b) {
    parity_dist_buckets_destroy(b);
    return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "buckets_create: out of memory");
  }
  size_t es = psup_dtype_size(dt);
  uint64_t bytes = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = n - 1 - k;
    b->params[i] = params[i];
    b->order[k] = i;
    uint64_t pb = (uint64_t)parity_tensor_numel(params[i]) * es;
    if (b->nb == 0 || (bytes + pb > bucket_bytes && bytes > 0)) {
      b->b[b->nb].first = k;
      b->nb++;
      bytes = 0;
    }
    bucket_t *bk = &b->b[b->nb - 1];
    bk->count++;
    bk->elems += (uint64_t)parity_tensor_numel(params[i]);
    b->bucket_of[i] = b->nb - 1;
    bytes += pb;
  }
  if (b->nb > 8000) {
    parity_dist_buckets_destroy(b);
    return dist_fail(PARITY_STATUS_OUT_OF_RANGE, "buckets_create: more than 8000 buckets; use larger buckets");
  }
  for (uint32_t j = 0; j < b->nb; j++) {
    bucket_t *bk = &b->b[j];
    bk->buf = malloc(bk->elems * es + 1);
    bk->grads = calloc(bk->count, sizeof *bk->grads);
    if (!bk->buf || !bk->grads) {
      parity_dist_buckets_destroy(b);
      return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "buckets_create: out of memory");
    }
    bk->ar = (ar_t){.dt = dt,
                    .es = es,
                    .count = bk->elems,
                    .buf = bk->buf,
                    .tag1 = TAG_BUCKET0 + 2 * (int)j,
                    .tag2 = TAG_BUCKET0 + 2 * (int)j + 1,
                    .op = op};
  }
  *out = b;
  return PARITY_STATUS_OK;
}

static parity_status_t buckets_progress(parity_dist_buckets_t *b, int *busy) {
  *busy = 0;
  for (uint32_t j = 0; j < b->nb; j++) {
    int bz = 0;
    parity_status_t st = dist_ar_progress(b->d, &b->b[j].ar, &bz);
    if (st) return st;
    *busy |= bz;
  }
  return PARITY_STATUS_OK;
}

static parity_status_t bucket_launch(parity_dist_buckets_t *b, uint32_t j) {
  bucket_t *bk = &b->b[j];
  size_t es = psup_dtype_size(b->dt);
  uint64_t off = 0;
  for (uint32_t k = 0; k < bk->count; k++) {
    uint32_t i = b->order[bk->first + k];
    parity_tensor_t *g = parity_tensor_grad(b->params[i]);
    uint64_t bytes = (uint64_t)parity_tensor_numel(b->params[i]) * es;
    bk->grads[k] = g;
    if (!g)
      memset(bk->buf + off, 0, bytes); /* an unused parameter contributes zeros */
    else if (parity_tensor_to_host(g, bk->buf + off, bytes) != PARITY_STATUS_OK) {
      char msg[900];
      snprintf(msg, sizeof msg, "bucket %u: reading the gradient of parameter %u: %s", j, i, parity_last_error());
      parity_dist_abort(b->d, 70, msg);
    }
    off += bytes;
  }
  snprintf(bk->ar.what, sizeof bk->ar.what, "bucket %u of step #%llu", j, (unsigned long long)b->d->seq);
  bk->ar.phase = 0;
  return dist_ar_start(b->d, &bk->ar);
}

parity_status_t parity_dist_buckets_ready(parity_dist_buckets_t *b, uint32_t i) {
  if (!b || i >= b->count) return dist_fail(PARITY_STATUS_OUT_OF_RANGE, "buckets_ready: parameter %u out of range", i);
  if (b->is_ready[i])
    return dist_fail(PARITY_STATUS_FAILED_PRECONDITION, "buckets_ready: parameter %u marked twice", i);
  b->is_ready[i] = 1;
  bucket_t *bk = &b->b[b->bucket_of[i]];
  parity_status_t st = PARITY_STATUS_OK;
  if (++bk->ready == bk->count) st = bucket_launch(b, b->bucket_of[i]);
  int busy;
  if (!st) st = buckets_progress(b, &busy);
  return st;
}

parity_status_t parity_dist_buckets_finish(parity_dist_buckets_t *b) {
  if (!b) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "buckets_finish: NULL");
  parity_status_t st = PARITY_STATUS_OK;
  for (uint32_t k = 0; k < b->count && !st; k++)
    if (!b->is_ready[b->order[k]]) st = parity_dist_buckets_ready(b, b->order[k]);
  size_t es = psup_dtype_size(b->dt);
  double t0 = dist_now_s(), deadline = t0 + b->d->timeout_s;
  uint32_t written = 0;
  uint8_t *done = calloc(b->nb, 1);
  if (!done) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "buckets_finish: out of memory");
  /* Write back buckets as they complete, in bucket order, while later ones are in flight. */
  while (!st && written < b->nb) {
    int busy = 0;
    st = buckets_progress(b, &busy);
    for (uint32_t j = 0; j < b->nb && !st; j++) {
      bucket_t *bk = &b->b[j];
      if (done[j] || bk->ar.phase != 3) continue;
      uint64_t off = 0;
      for (uint32_t k = 0; k < bk->count && !st; k++) {
        uint32_t i = b->order[bk->first + k];
        uint64_t bytes = (uint64_t)parity_tensor_numel(b->params[i]) * es;
        if (bk->grads[k] && parity_tensor_write(bk->grads[k], bk->buf + off, bytes) != PARITY_STATUS_OK)
          st = dist_fail(PARITY_STATUS_DEVICE_ERROR, "bucket %u: writing the gradient of parameter %u: %s", j, i,
                         parity_last_error());
        off += bytes;
      }
      done[j] = 1;
      written++;
    }
    if (st || written == b->nb) break;
    if (dist_now_s() > deadline) {
      for (uint32_t j = 0; j < b->nb; j++)
        if (b->b[j].ar.phase != 3) {
          st = dist_timed_out(b->d, &b->b[j].ar.rs, b->b[j].ar.what);
          break;
        }
    }
    if (!st) dist_relax(t0);
  }
  free(done);
  for (uint32_t j = 0; j < b->nb; j++) {
    b->b[j].ready = 0;
    b->b[j].ar.phase = 0;
    b->b[j].ar.rs.n = 0;
  }
  memset(b->is_ready, 0, b->count);
  b->d->seq++;
  return st;
}
