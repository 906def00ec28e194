/* alloc.c — the per-device caching allocator. Storage sizes are rounded up to a power of two
 * (at least 256 bytes); freed buffers go to a free list of their class and are handed out
 * again, so a steady-state training step asks the plugin for no new memory. The cache holds at
 * most the device's cache limit (PARITY_CACHE_LIMIT, default min(1 GiB, memory / 8)): a buffer
 * that would exceed it first makes room by giving back cached buffers of other sizes, the largest
 * first (memory released last is the likeliest to be asked for again: a loop over a new size
 * would otherwise fault in fresh pages on every call while stale sizes filled the cache), and goes
 * back to the plugin itself only when buffers of its own size fill the limit. It is drained when
 * the device closes, when the plugin reports out-of-memory, and by parity_device_trim_cache(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"

#include "pool.h"
#include "tensor_internal.h"

static uint32_t size_class(uint64_t bytes) {
  uint32_t k = 8;
  while (k < 63 && (1ull << k) < bytes) k++;
  return k;
}

static void bin_drain(parity_device_t *dev, parity__cache_bin *bin) {
  for (uint32_t i = 0; i < bin->count; i++) parity_buffer_free(bin->items[i]);
  free(bin->items);
  bin->items = NULL;
  bin->count = bin->cap = 0;
  (void)dev;
}

void parity__cache_drain(parity_device_t *dev) {
  for (int k = 0; k < 64; k++) bin_drain(dev, &dev->cache[k]);
  dev->cached_bytes = 0;
}

int parity__parse_cache_limit(const char *e, uint64_t *out) {
  if (!e || !*e || e[0] < '0' || e[0] > '9') return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(e, &end, 10);
  uint64_t scale = 1;
  if (end && (*end == 'K' || *end == 'k'))
    scale = 1ull << 10, end++;
  else if (end && (*end == 'M' || *end == 'm'))
    scale = 1ull << 20, end++;
  else if (end && (*end == 'G' || *end == 'g'))
    scale = 1ull << 30, end++;
  if (errno || end == e || *end || v > UINT64_MAX / scale) return -1;
  *out = (uint64_t)v * scale;
  return 0;
}

uint64_t parity__cache_limit(parity_context_t *ctx, const parity_device_info_t *info) {
  (void)ctx;
  uint64_t def = 1ull << 30, v;
  if (info->memory_bytes && info->memory_bytes / 8 < def) def = info->memory_bytes / 8;
  const char *e = psup_getenv("PARITY_CACHE_LIMIT");
  /* parity_context_create refused a value that does not parse */
  return e && *e && parity__parse_cache_limit(e, &v) == 0 ? v : def;
}

uint64_t parity_device_cache_bytes(const parity_device_t *dev) { return dev ? dev->cached_bytes : 0; }

uint64_t parity_device_trim_cache(parity_device_t *dev) {
  if (!dev) return 0;
  uint64_t had = dev->cached_bytes;
  parity__cache_drain(dev);
  return had;
}

static parity__pool storage_pool = PARITY__POOL_INIT(PARITY__POOL_STORAGE, parity__storage, buf, 4096);

parity_status_t parity__storage_new(parity_device_t *dev, uint64_t bytes, parity__storage **out) {
  parity__storage *st = parity__pool_get(&storage_pool);
  if (!st) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "out of host memory");
  uint32_t k = size_class(bytes);
  parity__cache_bin *bin = &dev->cache[k];
  if (bin->count > 0) {
    st->buf = bin->items[--bin->count];
    dev->cached_bytes -= 1ull << k;
  } else {
    parity_status_t s = parity_buffer_alloc(dev, 1ull << k, &st->buf);
    if (s == PARITY_STATUS_OUT_OF_MEMORY && dev->cached_bytes > 0) {
      parity__cache_drain(dev);
      s = parity_buffer_alloc(dev, 1ull << k, &st->buf);
    }
    if (s != PARITY_STATUS_OK) {
      parity__pool_put(&storage_pool, st);
      return s;
    }
  }
  st->refs = 1;
  st->dev = dev;
  st->plan_fills = 0;
  st->plan_holds = 0;
  if (dev->storages++ == 0) parity__context_retain(dev->ctx);
  st->bytes = bytes;
  *out = st;
  return PARITY_STATUS_OK;
}

/* Give back cached buffers of classes other than k, the largest first, until 2^k more bytes fit
 * under the limit (when they can). */
static void make_room(parity_device_t *dev, uint32_t k) {
  const uint64_t size = 1ull << k;
  if (size > dev->cache_limit) return;
  for (int c = 63; c >= 0 && dev->cached_bytes + size > dev->cache_limit; c--) {
    parity__cache_bin *bin = &dev->cache[c];
    while ((uint32_t)c != k && bin->count > 0 && dev->cached_bytes + size > dev->cache_limit) {
      parity_buffer_free(bin->items[--bin->count]);
      dev->cached_bytes -= 1ull << c;
    }
  }
}

/* The last statement of a storage's release: the device's context reference goes with its last
 * storage (which may close the device and free the context). */
static void storage_gone(parity_device_t *dev) {
  if (--dev->storages == 0) parity__context_release(dev->ctx);
}

void parity__storage_release(parity__storage *st) {
  if (!st || --st->refs > 0) return;
  parity_device_t *dev = st->dev;
  uint32_t k = size_class(st->bytes);
  parity__cache_bin *bin = &dev->cache[k];
  if (dev->cached_bytes + (1ull << k) > dev->cache_limit) make_room(dev, k);
  if (dev->cached_bytes + (1ull << k) > dev->cache_limit) { /* still over the limit: give it back */
    parity_buffer_free(st->buf);
    parity__pool_put(&storage_pool, st);
    storage_gone(dev);
    return;
  }
  if (bin->count == bin->cap) {
    uint32_t cap = bin->cap ? bin->cap * 2 : 8;
    parity_buffer_t **items = realloc(bin->items, cap * sizeof *items);
    if (!items) { /* cannot cache it: give it back */
      parity_buffer_free(st->buf);
      parity__pool_put(&storage_pool, st);
      storage_gone(dev);
      return;
    }
    bin->items = items;
    bin->cap = cap;
  }
  bin->items[bin->count++] = st->buf;
  dev->cached_bytes += 1ull << k;
  parity__pool_put(&storage_pool, st);
  storage_gone(dev);
}
