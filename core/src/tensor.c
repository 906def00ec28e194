/* tensor.c — tensor objects: creation, host transfer, queries, descriptors and op launch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "parity_support/shape.h"
#include "pool.h"
#include "tensor_internal.h"

static parity_status_t check_shape(const char *what, uint32_t rank, const int64_t *shape, int64_t *numel) {
  char msg[256];
  int32_t st = psup_shape_check(what, rank, shape, numel, msg, sizeof msg);
  return st == PARITY_STATUS_OK ? PARITY_STATUS_OK : parity__fail((parity_status_t)st, "%s", msg);
}

/* Tensor structs come from a pool (pool.h); released ones pass through the quarantine first. */
static parity__pool tensor_pool = PARITY__POOL_INIT(PARITY__POOL_TENSOR, parity_tensor_t, grad, 4096);

parity_status_t parity__tensor_empty(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                                     parity_tensor_t **out) {
  *out = NULL;
  if (!dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor: device is NULL");
  if (psup_dtype_size(dtype) == 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor: invalid dtype %d", dtype);
  int64_t n;
  parity_status_t st = check_shape("tensor", rank, shape, &n);
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_t *t = parity__pool_get(&tensor_pool);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "tensor: out of host memory");
  t->magic = PARITY__TENSOR_LIVE;
  st = parity__storage_new(dev, (uint64_t)n * psup_dtype_size(dtype), &t->st);
  if (st != PARITY_STATUS_OK) {
    parity__pool_put(&tensor_pool, t);
    return st;
  }
  t->refs = 1;
  t->dtype = dtype;
  t->rank = rank;
  for (uint32_t i = 0; i < rank; i++) t->shape[i] = shape[i];
  psup_contiguous_strides(rank, shape, t->strides);
  parity__scope_register(t);
  *out = t;
  return PARITY_STATUS_OK;
}

parity_status_t parity__tensor_empty_like(const parity_tensor_t *x, parity_tensor_t **out) {
  return parity__tensor_empty(x->st->dev, x->dtype, x->rank, x->shape, out);
}

parity_status_t parity__tensor_empty_as(const parity_tensor_t *x, parity_tensor_t **out) {
  uint32_t r = x->rank, order[PARITY_MAX_RANK];
  int dense = r > 1, permuted = 0;
  for (uint32_t i = 0; i < r; i++) {
    if (x->shape[i] < 2 || x->strides[i] <= 0) dense = 0; /* size-1 axes and broadcasts: contiguous */
    order[i] = i;
  }
  for (uint32_t i = 1; dense && i < r; i++) /* the axes by falling stride (insertion sort) */
    for (uint32_t j = i; j > 0 && x->strides[order[j - 1]] < x->strides[order[j]]; j--) {
      uint32_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
      permuted = 1;
    }
  int64_t expect = 1, pshape[PARITY_MAX_RANK];
  for (uint32_t i = r; dense && i-- > 0;) { /* dense: each stride the product of the faster axes */
    if (x->strides[order[i]] != expect) dense = 0;
    expect *= x->shape[order[i]];
    pshape[i] = x->shape[order[i]];
  }
  if (!dense || !permuted) return parity__tensor_empty_like(x, out);
  parity_status_t st = parity__tensor_empty(x->st->dev, x->dtype, r, pshape, out);
  if (st != PARITY_STATUS_OK) return st;
  int64_t pstrides[PARITY_MAX_RANK];
  psup_contiguous_strides(r, pshape, pstrides);
  for (uint32_t i = 0; i < r; i++) {
    (*out)->shape[order[i]] = pshape[i];
    (*out)->strides[order[i]] = pstrides[i];
  }
  return PARITY_STATUS_OK;
}

parity_tensor_t *parity__tensor_alias(const parity_tensor_t *x) {
  parity_tensor_t *t = parity__pool_get(&tensor_pool);
  if (!t) return NULL;
  t->magic = PARITY__TENSOR_LIVE;
  t->refs = 1;
  t->st = x->st;
  t->st->refs++;
  t->dtype = x->dtype;
  t->rank = x->rank;
  memcpy(t->shape, x->shape, sizeof t->shape);
  memcpy(t->strides, x->strides, sizeof t->strides);
  t->offset = x->offset;
  parity__scope_register(t);
  return t;
}

/* Released tensor structs wait in a quarantine (the last 256 this thread released: pool.h's
 * delayed put) before their memory is reused, marked DEAD, so releasing (or retaining) one again
 * is detected and refused with a message instead of corrupting the heap. Older ones cannot be
 * told apart from live memory; sanitizer builds catch those. */
static int tensor_dead(const parity_tensor_t *t, const char *what) {
  if (t->magic == PARITY__TENSOR_LIVE) return 0;
  parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
               "%s: the tensor was already released (double release "
               "or use after release); the call is ignored",
               what);
  parity__log(NULL, 1, "%s", parity_last_error());
  return 1;
}

parity_tensor_t *parity_tensor_retain(parity_tensor_t *t) {
  if (!t || tensor_dead(t, "tensor_retain")) return NULL;
  t->refs++;
  return t;
}

static void tensor_free(parity_tensor_t *t) {
  parity__scope_forget(t);
  if (t->grad) parity_tensor_release(t->grad);
  if (t->node) parity__node_release(t->node);
  parity__storage_release(t->st);
  t->magic = PARITY__TENSOR_DEAD;
  parity__pool_put_delayed(&tensor_pool, t);
}

/* Releasing a tensor releases its node, which releases the node's inputs, and so on down the
 * graph: done with a per-thread work list, not recursion, so a 300,000-op chain cannot overflow
 * the stack. */
#define PENDING_INLINE 64
typedef struct release_list {
  parity_tensor_t *inline_[PENDING_INLINE];
  parity_tensor_t **items; /* inline_, or the heap when it overflows */
  size_t count, cap;
  int releasing;
} release_list;
static _Thread_local release_list rel; /* one thread-local block: one TLS lookup per release */

void parity_tensor_release(parity_tensor_t *t) {
  if (!t || tensor_dead(t, "tensor_release") || --t->refs > 0) return;
  release_list *r = &rel;
  if (r->releasing) { /* inside a release further up: queue it */
    if (r->count == r->cap) {
      size_t cap = r->cap * 2;
      parity_tensor_t **p = r->items == r->inline_ ? malloc(cap * sizeof *p) : realloc(r->items, cap * sizeof *p);
      if (!p) { /* no memory for the list: free it here (recursion, as a last resort) */
        tensor_free(t);
        return;
      }
      if (r->items == r->inline_) memcpy(p, r->inline_, sizeof r->inline_);
      r->items = p;
      r->cap = cap;
    }
    r->items[r->count++] = t;
    return;
  }
  r->releasing = 1;
  r->items = r->inline_;
  r->cap = PENDING_INLINE;
  tensor_free(t);
  while (r->count) tensor_free(r->items[--r->count]);
  if (r->items != r->inline_) free(r->items);
  r->items = NULL;
  r->releasing = 0;
}

/* keep_masks[r][a]: all ones for a < r, else 0 (the descriptor's entries past the rank are 0) */
typedef int64_t desc_v2 __attribute__((vector_size(16)));
static const int64_t keep_masks[PARITY_MAX_RANK + 1][PARITY_MAX_RANK]
    __attribute__((aligned(16))) = {{0},
                                    {-1},
                                    {-1, -1},
                                    {-1, -1, -1},
                                    {-1, -1, -1, -1},
                                    {-1, -1, -1, -1, -1},
                                    {-1, -1, -1, -1, -1, -1},
                                    {-1, -1, -1, -1, -1, -1, -1},
                                    {-1, -1, -1, -1, -1, -1, -1, -1}};

void parity__tensor_desc(const parity_tensor_t *t, parity_tensor_desc_t *d) {
  d->struct_size = sizeof *d;
  d->dtype = t->dtype;
  d->rank = t->rank;
  d->reserved0 = 0;
  /* past the rank: 0, two entries per step under a mask (a loop from the rank became two memset
   * calls, and an element loop was a tenth of a small eager op's host work) */
  const int64_t *keep = keep_masks[t->rank <= PARITY_MAX_RANK ? t->rank : PARITY_MAX_RANK];
  for (uint32_t a = 0; a < PARITY_MAX_RANK; a += 2) {
    desc_v2 m, sh, sd;
    memcpy(&m, keep + a, sizeof m);
    memcpy(&sh, t->shape + a, sizeof sh);
    memcpy(&sd, t->strides + a, sizeof sd);
    sh &= m;
    sd &= m;
    memcpy(d->shape + a, &sh, sizeof sh);
    memcpy(d->strides + a, &sd, sizeof sd);
  }
  d->buffer = parity_buffer_handle(t->st->buf);
  d->offset_bytes = (uint64_t)t->offset * psup_dtype_size(t->dtype);
}

int parity__same_shape(const parity_tensor_t *a, const parity_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

const char *parity__shape_str(const parity_tensor_t *t, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s[", psup_dtype_name(t->dtype));
  for (uint32_t i = 0; i < t->rank && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)t->shape[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

parity_status_t parity__check_same_device(const char *op, parity_tensor_t *const *ts, uint32_t n) {
  parity_device_t *dev = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!ts[i]) continue;
    if (dev && ts[i]->st->dev != dev)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "%s: tensors live on different devices "
                          "('%s' device %u and '%s' device %u); move them to one device first",
                          op, parity_device_plugin_name(dev), parity_device_index(dev),
                          parity_device_plugin_name(ts[i]->st->dev), parity_device_index(ts[i]->st->dev));
    dev = ts[i]->st->dev;
  }
  return PARITY_STATUS_OK;
}

parity_status_t parity__launch(parity_device_t *dev, int32_t op, int32_t direction, parity_tensor_t *const *ins,
                               uint32_t nin, parity_tensor_t *const *outs, uint32_t nout,
                               const parity_op_params_t *params) {
  parity_tensor_desc_t descs[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  parity__storage *in_st[PARITY_MAX_INPUTS] = {0}, *out_st[PARITY_MAX_OUTPUTS] = {0};
  parity_op_desc_t d;
  memset(&d, 0, offsetof(parity_op_desc_t, params)); /* params: copied below, or zeroed */
  if (params)
    d.params = *params;
  else
    memset(&d.params, 0, sizeof d.params);
  d.struct_size = sizeof d;
  d.op = op;
  d.direction = direction;
  d.num_inputs = nin;
  d.num_outputs = nout;
  int64_t total = 0;
  for (uint32_t i = 0; i < nin + nout; i++) {
    parity_tensor_t *t = i < nin ? ins[i] : outs[i - nin];
    const parity_tensor_desc_t **slot = i < nin ? &d.inputs[i] : &d.outputs[i - nin];
    if (!t) continue;
    parity__tensor_desc(t, &descs[i]);
    *slot = &descs[i];
    if (i < nin)
      in_st[i] = t->st;
    else
      out_st[i - nin] = t->st;
    if (i >= nin) total += psup_numel(&descs[i]);
  }
  if (total == 0) return PARITY_STATUS_OK; /* no kernel for zero elements */
  if (!parity__recording(dev))             /* eager: a plan's constant must not change under it (issue 38, item 7) */
    for (uint32_t i = 0; i < nout; i++)
      if (outs[i] && outs[i]->st->plan_fills)
        return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                            "%s: output %u is a tensor a plan refills on every "
                            "replay (it was filled, e.g. by parity_tensor_full or zero_grad, while the plan recorded), "
                            "so this write would be undone by the next replay; record the op in the plan, or create "
                            "the tensor before parity_plan_begin",
                            psup_op_name(op), i);
  parity__verify_inputs *pre = parity__verify_before(dev, ins, nin, outs, nout);
  parity_status_t st = parity__device_run_owned(dev, &d);
  dev->launches++;
  parity_plan_t *rec = st == PARITY_STATUS_OK ? parity__recording(dev) : NULL;
  if (rec) parity__plan_record_launch(rec, &d, in_st, out_st);
  parity__verify_launch(dev, &d, ins, nin, outs, nout, st == PARITY_STATUS_OK, pre);
  return st;
}

parity_status_t parity__fill(parity_tensor_t *t, double value) {
  uint32_t esz = psup_dtype_size(t->dtype);
  unsigned char pattern[8];
  psup_store_f64(pattern, t->dtype, value);
  uint64_t size = (uint64_t)parity_tensor_numel(t) * esz;
  if (size == 0) return PARITY_STATUS_OK;
  uint64_t off = (uint64_t)t->offset * esz;
  if (t->st->plan_fills && !parity__recording(t->st->dev))
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "fill: the tensor is one a plan refills on every replay, "
                        "so this fill would be undone by the next replay; record it in the plan, or create the tensor "
                        "before parity_plan_begin");
  parity_status_t st = parity_buffer_fill(t->st->buf, off, size, pattern, esz);
  parity_plan_t *rec = st == PARITY_STATUS_OK ? parity__recording(t->st->dev) : NULL;
  if (rec) parity__plan_record_fill(rec, t->st, off, size, pattern, esz);
  return st;
}

/* ---- public creation ----------------------------------------------------------------------- */
parity_status_t parity_tensor_from_host(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                        const void *data, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_from_host: out is NULL");
  *out = NULL;
  parity_tensor_t *t;
  parity_status_t st = parity__tensor_empty(dev, dtype, rank, shape, &t);
  if (st != PARITY_STATUS_OK) return st;
  uint64_t bytes = (uint64_t)parity_tensor_numel(t) * psup_dtype_size(dtype);
  if (bytes && !data) {
    parity_tensor_release(t);
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_from_host: data is NULL");
  }
  st = parity_tensor_write(t, data, bytes);
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(t);
    return st;
  }
  *out = t;
  return PARITY_STATUS_OK;
}

parity_status_t parity_tensor_from_f64(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                       const double *data, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_from_f64: out is NULL");
  *out = NULL;
  int64_t n;
  parity_status_t st = check_shape("tensor_from_f64", rank, shape, &n);
  if (st != PARITY_STATUS_OK) return st;
  uint32_t esz = psup_dtype_size(dtype);
  if (!esz) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_from_f64: invalid dtype %d", dtype);
  if (n && !data) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_from_f64: data is NULL");
  unsigned char *host = malloc(n ? (size_t)n * esz : 1);
  if (!host) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "tensor_from_f64: out of host memory");
  for (int64_t i = 0; i < n; i++) psup_store_f64(host + i * esz, dtype, data[i]);
  st = parity_tensor_from_host(dev, dtype, rank, shape, host, out);
  free(host);
  return st;
}

parity_status_t parity_tensor_full(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                   double value, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_full: out is NULL");
  *out = NULL;
  parity_tensor_t *t = NULL;
  parity_status_t st = parity__tensor_empty(dev, dtype, rank, shape, &t);
  if (st == PARITY_STATUS_OK) st = parity__fill(t, value);
  if (st != PARITY_STATUS_OK) {
    if (t) parity_tensor_release(t);
    return st;
  }
  *out = t;
  return PARITY_STATUS_OK;
}

parity_status_t parity_tensor_zeros(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                    parity_tensor_t **out) {
  return parity_tensor_full(dev, dtype, rank, shape, 0.0, out);
}

parity_status_t parity_tensor_ones(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank, const int64_t *shape,
                                   parity_tensor_t **out) {
  return parity_tensor_full(dev, dtype, rank, shape, 1.0, out);
}

parity_status_t parity_tensor_arange(parity_device_t *dev, parity_dtype_t dtype, double start, double stop, double step,
                                     parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "arange: out is NULL");
  *out = NULL;
  if (step == 0 || !isfinite(step) || !isfinite(start) || !isfinite(stop))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "arange: start %g, stop %g, step %g must be "
                        "finite with a non-zero step",
                        start, stop, step);
  double count = ceil((stop - start) / step);
  if (count < 0) count = 0;
  if (count > 1e12) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "arange: %g elements is too many", count);
  int64_t n = (int64_t)count;
  double *v = malloc(n ? (size_t)n * sizeof *v : 1);
  if (!v) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "arange: out of host memory");
  for (int64_t i = 0; i < n; i++) v[i] = start + (double)i * step;
  parity_status_t st = parity_tensor_from_f64(dev, dtype, 1, &n, v, out);
  free(v);
  return st;
}

/* ---- data and queries ---------------------------------------------------------------------- */
parity_status_t parity_tensor_to_host(const parity_tensor_t *t, void *dst, uint64_t dst_bytes) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_to_host: tensor is NULL");
  uint32_t esz = psup_dtype_size(t->dtype);
  int64_t n = parity_tensor_numel(t);
  if (dst_bytes < (uint64_t)n * esz)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "tensor_to_host: %llu-byte destination, "
                        "tensor needs %llu",
                        (unsigned long long)dst_bytes, (unsigned long long)n * esz);
  if (n == 0) return PARITY_STATUS_OK;
  if (!dst) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_to_host: destination is NULL");
  if (parity_tensor_is_contiguous(t))
    return parity_buffer_read(t->st->buf, (uint64_t)t->offset * esz, dst, (uint64_t)n * esz);
  /* strided: read the storage and gather on the host */
  unsigned char *all = malloc(t->st->bytes ? t->st->bytes : 1);
  if (!all) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "tensor_to_host: out of host memory");
  parity_status_t st = parity_buffer_read(t->st->buf, 0, all, t->st->bytes);
  if (st == PARITY_STATUS_OK) {
    const int64_t *strides[1] = {t->strides};
    psup_iter_t it;
    psup_iter_init(&it, t->rank, t->shape, 1, strides);
    for (int64_t i = 0; i < n; i++) {
      memcpy((unsigned char *)dst + i * esz, all + (t->offset + it.off[0]) * esz, esz);
      psup_iter_next(&it);
    }
  }
  free(all);
  return st;
}

parity_status_t parity_tensor_item(const parity_tensor_t *t, double *out) {
  if (!t || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_item: NULL argument");
  if (parity_tensor_numel(t) != 1)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_item: the tensor has %lld elements, not one",
                        (long long)parity_tensor_numel(t));
  return parity_tensor_to_f64(t, out, 1);
}

parity_status_t parity_tensor_to_f64(const parity_tensor_t *t, double *dst, uint64_t count) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_to_f64: tensor is NULL");
  if (!dst && count > 0) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_to_f64: dst is NULL");
  int64_t n = parity_tensor_numel(t);
  if (count < (uint64_t)n)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "tensor_to_f64: room for %llu values, tensor "
                        "has %lld",
                        (unsigned long long)count, (long long)n);
  uint32_t esz = psup_dtype_size(t->dtype);
  unsigned char *host = malloc(n ? (size_t)n * esz : 1);
  if (!host) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "tensor_to_f64: out of host memory");
  parity_status_t st = parity_tensor_to_host(t, host, (uint64_t)n * esz);
  for (int64_t i = 0; st == PARITY_STATUS_OK && i < n; i++) dst[i] = psup_load_f64(host + i * esz, t->dtype);
  free(host);
  return st;
}

parity_status_t parity_tensor_write(parity_tensor_t *t, const void *src, uint64_t src_bytes) {
  if (!t) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_write: tensor is NULL");
  uint32_t esz = psup_dtype_size(t->dtype);
  uint64_t bytes = (uint64_t)parity_tensor_numel(t) * esz;
  if (src_bytes != bytes)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "tensor_write: %llu bytes given, tensor holds %llu",
                        (unsigned long long)src_bytes, (unsigned long long)bytes);
  if (!parity_tensor_is_contiguous(t))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "tensor_write: tensor is a non-contiguous view; "
                        "write into a contiguous tensor");
  if (t->st->plan_fills)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "tensor_write: a plan refills this tensor's memory "
                        "on every replay (it was filled, e.g. by parity_tensor_full, while the plan recorded), so "
                        "the write would be undone; create inputs before parity_plan_begin (or destroy the plan)");
  if (bytes == 0) return PARITY_STATUS_OK;
  uint64_t off = (uint64_t)t->offset * esz;
  parity_status_t st = parity_buffer_write(t->st->buf, off, src, bytes);
  parity_plan_t *rec = st == PARITY_STATUS_OK ? parity__recording(t->st->dev) : NULL;
  if (rec) parity__plan_host_write(rec, t->st); /* an input: kept, never replayed (plan.c) */
  return st;
}

/* Accessors answer NULL with a neutral value (documented in tensor.h). */
parity_dtype_t parity_tensor_dtype(const parity_tensor_t *t) {
  return t ? (parity_dtype_t)t->dtype : PARITY_DTYPE_INVALID;
}
uint32_t parity_tensor_rank(const parity_tensor_t *t) { return t ? t->rank : 0; }
int64_t parity_tensor_dim(const parity_tensor_t *t, int32_t axis) {
  uint32_t a;
  return t && psup_axis(axis, t->rank, &a) == 0 ? t->shape[a] : 0;
}
const int64_t *parity_tensor_shape(const parity_tensor_t *t) { return t ? t->shape : NULL; }
const int64_t *parity_tensor_strides(const parity_tensor_t *t) { return t ? t->strides : NULL; }
parity_device_t *parity_tensor_device(const parity_tensor_t *t) { return t ? t->st->dev : NULL; }
int parity_tensor_shares_storage(const parity_tensor_t *a, const parity_tensor_t *b) {
  return a && b && a->st == b->st;
}

int64_t parity_tensor_numel(const parity_tensor_t *t) {
  if (!t) return 0;
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

int parity_tensor_is_contiguous(const parity_tensor_t *t) {
  if (!t) return 0;
  int64_t expect = 1;
  for (int32_t i = (int32_t)t->rank - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}
