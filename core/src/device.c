/* device.c — devices, buffers and op dispatch through a plugin's function table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_internal.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"

int32_t parity__plugin_device_info(const parity_plugin_api_t *api, uint32_t device, parity_device_info_t *out) {
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  parity__clear_error();
  int32_t st = api->get_device_info(device, &info);
  if (st != PARITY_STATUS_OK) {
    if (!parity_last_error()[0]) parity__fail(st, "get_device_info(%u) failed: %s", device, psup_status_name(st));
    return st;
  }
  /* untrusted: struct_size back to ours, strings terminated within their arrays, one line */
  info.struct_size = sizeof info;
  char text[sizeof info.name];
  parity__copy_text(text, sizeof info.name, info.name);
  memcpy(info.name, text, sizeof info.name);
  parity__copy_text(text, sizeof info.driver, info.driver);
  memcpy(info.driver, text, sizeof info.driver);
  parity__copy_text(text, sizeof info.math, info.math);
  memcpy(info.math, text, sizeof info.math);
  *out = info;
  return PARITY_STATUS_OK;
}

parity_status_t parity__device_open(parity_context_t *ctx, parity__plugin *p, uint32_t index,
                                    parity_device_t **out_dev) {
  parity_device_t *dev = calloc(1, sizeof *dev);
  if (!dev) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "device_open: out of memory");
  dev->ctx = ctx;
  dev->plugin = p;
  dev->index = index;
  int32_t st = parity__plugin_device_info(&p->mod->api, index, &dev->info);
  if (st == PARITY_STATUS_OK) {
    parity__clear_error();
    st = p->mod->api.device_open(index, &dev->handle);
    if (st == PARITY_STATUS_OK && !dev->handle)
      st = parity__fail(PARITY_STATUS_INTERNAL, "plugin returned OK with no device handle");
  }
  if (st != PARITY_STATUS_OK) {
    if (!parity_last_error()[0]) parity__fail(st, "%s (plugin gave no message)", psup_status_name(st));
    free(dev);
    return st;
  }
  dev->cache_limit = parity__cache_limit(ctx, &dev->info);
  parity__log(ctx, 2, "opened device %u of plugin '%s': %s", index, p->name, dev->info.name);
  *out_dev = dev;
  return PARITY_STATUS_OK;
}

void parity__device_close(parity_device_t *dev) {
  if (!dev) return;
  parity__cache_drain(dev);
  dev->plugin->mod->api.synchronize(dev->handle);
  dev->plugin->mod->api.device_close(dev->handle);
  free(dev->verify_report);
  free(dev->live);
  free(dev);
}

/* ---- the live-buffer registry (open addressing on the plugin handle, tombstones) ---------- */
#define LIVE_TOMB ((parity_buffer_t *)1)

static uint64_t live_slot(const void *h, uint64_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)h;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x & (cap - 1);
}

static int live_insert(parity_device_t *dev, parity_buffer_t *b) {
  if ((dev->live_count + 1) * 2 > dev->live_cap) {
    uint64_t cap = dev->live_cap ? dev->live_cap * 2 : 64;
    parity_buffer_t **items = calloc(cap, sizeof *items);
    if (!items) return -1;
    for (uint64_t i = 0; i < dev->live_cap; i++) {
      parity_buffer_t *o = dev->live[i];
      if (!o || o == LIVE_TOMB) continue;
      uint64_t k = live_slot(o->handle, cap);
      while (items[k]) k = (k + 1) & (cap - 1);
      items[k] = o;
    }
    free(dev->live);
    dev->live = items;
    dev->live_cap = cap;
  }
  uint64_t k = live_slot(b->handle, dev->live_cap);
  while (dev->live[k] && dev->live[k] != LIVE_TOMB) k = (k + 1) & (dev->live_cap - 1);
  dev->live[k] = b;
  dev->live_count++;
  return 0;
}

static uint64_t live_find(const parity_device_t *dev, const parity_plugin_buffer_t *h) {
  if (!dev->live_cap) return UINT64_MAX;
  for (uint64_t k = live_slot(h, dev->live_cap), n = 0; n < dev->live_cap; k = (k + 1) & (dev->live_cap - 1), n++) {
    parity_buffer_t *o = dev->live[k];
    if (!o) return UINT64_MAX;
    if (o != LIVE_TOMB && o->handle == h) return k;
  }
  return UINT64_MAX;
}

parity_buffer_t *parity__buffer_lookup(const parity_device_t *dev, const parity_plugin_buffer_t *h) {
  uint64_t k = live_find(dev, h);
  return k == UINT64_MAX ? NULL : dev->live[k];
}

/* NULL answers: NULL names, index 0 (documented in parity.h). */
const char *parity_device_plugin_name(const parity_device_t *dev) { return dev ? dev->plugin->name : NULL; }
const char *parity_device_backend(const parity_device_t *dev) { return dev ? dev->plugin->backend : NULL; }
uint32_t parity_device_index(const parity_device_t *dev) { return dev ? dev->index : 0; }
parity_context_t *parity_device_context(const parity_device_t *dev) { return dev ? dev->ctx : NULL; }

parity_status_t parity_device_get_info(const parity_device_t *dev, parity_device_info_t *out) {
  if (!dev || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "device_get_info: NULL argument");
  uint32_t size = out->struct_size < sizeof dev->info ? out->struct_size : sizeof dev->info;
  memcpy(out, &dev->info, size);
  out->struct_size = size;
  return PARITY_STATUS_OK;
}

/* The plugin's entry for the op's family and direction (NULL when it has none). */
static parity_kernel_fn family_entry(const parity_plugin_api_t *api, const parity_op_desc_t *d) {
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  switch (psup_kind_family(psup_op_info(d->op)->kind)) {
    case PARITY_FAMILY_ELEMENTWISE: return fwd ? api->elementwise_forward : api->elementwise_backward;
    case PARITY_FAMILY_REDUCE: return fwd ? api->reduce_forward : api->reduce_backward;
    case PARITY_FAMILY_MATMUL: return fwd ? api->matmul_forward : api->matmul_backward;
    case PARITY_FAMILY_CONV2D: return fwd ? api->conv2d_forward : api->conv2d_backward;
    case PARITY_FAMILY_SOFTMAX: return fwd ? api->softmax_forward : api->softmax_backward;
    default: return NULL;
  }
}

/* A descriptor's class (PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS): op, direction, rank and each
 * operand's dtype and presence, packed into 64 bits (never 0); 0 when it does not fit. */
static uint64_t class_key(const parity_op_desc_t *d) {
  if ((uint32_t)d->op > 0xffffu) return 0;
  uint64_t k = (uint64_t)(uint32_t)d->op << 48 | (uint64_t)(d->direction & 1) << 47 | 1ull << 46;
  uint32_t slot = 0, rank = 0;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < count; i++, slot++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t) continue;
      if ((uint32_t)t->dtype > 15) return 0;
      k |= (uint64_t)(t->dtype + 1) << (4 * slot); /* slots 0..6: 28 bits, 0 = absent */
      rank = t->rank;
    }
  }
  return k | (uint64_t)(rank & 0xf) << 40;
}

static uint64_t *class_slot(parity_device_t *dev, uint64_t key) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  return &dev->supported[h >> 58]; /* 64 slots, direct-mapped: a clash only costs a question */
}

/* Ask the plugin; on failure prefix its message with backend, op and dtype. */
static parity_status_t ask_supports(parity_device_t *dev, const parity_op_desc_t *d) {
  const parity_plugin_api_t *api = &dev->plugin->mod->api;
  int32_t kind = psup_op_info(d->op)->kind;
  parity_kernel_fn fn = family_entry(api, d);
  const parity_tensor_desc_t *t = d->inputs[0] ? d->inputs[0] : d->outputs[0];
  const char *dt = t ? psup_dtype_name(t->dtype) : "?";
  if (!fn)
    return parity__fail(PARITY_STATUS_UNSUPPORTED,
                        "backend '%s' does not support %s %s %s: the "
                        "plugin has no %s %s entry",
                        dev->plugin->name, psup_op_name(d->op), psup_direction_name(d->direction), dt,
                        psup_family_name(psup_kind_family(kind)), psup_direction_name(d->direction));
  parity__clear_error();
  int32_t st = api->supports(dev->handle, d);
  if (st != PARITY_STATUS_OK) {
    char inner[768];
    snprintf(inner, sizeof inner, "%s", parity_last_error()[0] ? parity_last_error() : psup_status_name(st));
    return parity__fail(st, "backend '%s' %s %s %s %s: %s", dev->plugin->name,
                        st == PARITY_STATUS_UNSUPPORTED ? "does not support" : "rejected", psup_op_name(d->op),
                        psup_direction_name(d->direction), dt, inner);
  }
  return PARITY_STATUS_OK;
}

parity_status_t parity_device_supports(parity_device_t *dev, const parity_op_desc_t *desc) {
  if (!dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "device_supports: device is NULL");
  char msg[512];
  int32_t st = psup_check_op_desc(desc, 0, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return parity__fail(st, "%s", msg);
  return ask_supports(dev, desc);
}

/* Every operand's buffer is a live buffer of this device and the operand's bytes lie inside it. */
static parity_status_t check_operand_buffers(parity_device_t *dev, const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < count; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t || psup_numel(t) == 0) continue;
      const char *role = pass ? "output" : "input";
      const parity_buffer_t *b = parity__buffer_lookup(dev, t->buffer);
      if (!b)
        return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                            "device_run %s: %s %u's buffer is not a live "
                            "buffer of this device (backend '%s' device %u): it belongs to another "
                            "device or was freed",
                            psup_op_name(d->op), role, i, dev->plugin->name, dev->index);
      int64_t lo, hi;
      if (psup_byte_extent(t, &lo, &hi) != 0 || (uint64_t)hi > b->size)
        return parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                            "device_run %s: %s %u reaches bytes [%lld, %lld) "
                            "of a %llu-byte buffer",
                            psup_op_name(d->op), role, i, (long long)lo, (long long)hi, (unsigned long long)b->size);
    }
  }
  return PARITY_STATUS_OK;
}

/* caller_buffers: the descriptor came from outside libparity, so every operand's buffer is
 * checked against the device's live buffers; the tensor layer and plan replay build theirs from
 * storages they hold, whose extents they computed, and skip that lookup. */
static parity_status_t run(parity_device_t *dev, const parity_op_desc_t *desc, int caller_buffers) {
  if (!dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "device_run: device is NULL");
  char msg[512];
  /* a caller's descriptor is checked whole; libparity's own (built from tensors, whose dtype,
   * shape and strides were checked when each tensor was made) for the op's structure */
  int32_t st =
      caller_buffers ? psup_check_op_desc(desc, 1, msg, sizeof msg) : psup_check_op_structure(desc, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return parity__fail(st, "%s", msg);
  if (caller_buffers) {
    st = check_operand_buffers(dev, desc);
    if (st != PARITY_STATUS_OK) return st;
  }
  /* libparity's own descriptors have shapes its ops computed: a plugin that answers by class is
   * asked once per class (a caller's descriptor is always asked: its shapes are unchecked) */
  uint64_t key = !caller_buffers && (dev->info.flags & PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS) ? class_key(desc) : 0;
  uint64_t *slot = key ? class_slot(dev, key) : NULL;
  if (!slot || *slot != key) {
    st = ask_supports(dev, desc);
    if (st != PARITY_STATUS_OK) return st;
    if (slot) *slot = key;
  }
  const parity_plugin_api_t *api = &dev->plugin->mod->api;
  parity_kernel_fn fn = family_entry(api, desc);
  parity__clear_error();
  st = fn(dev->handle, desc);
  if (st != PARITY_STATUS_OK && !parity_last_error()[0])
    parity__fail(st, "%s %s on '%s' failed: %s", psup_op_name(desc->op), psup_direction_name(desc->direction),
                 dev->plugin->name, psup_status_name(st));
  return st;
}

parity_status_t parity_device_run(parity_device_t *dev, const parity_op_desc_t *desc) { return run(dev, desc, 1); }

parity_status_t parity__device_run_owned(parity_device_t *dev, const parity_op_desc_t *desc) {
  return run(dev, desc, 0);
}

parity_kernel_fn parity__device_entry(const parity_device_t *dev, const parity_op_desc_t *desc) {
  return family_entry(&dev->plugin->mod->api, desc);
}

const parity_plugin_api_t *parity__device_api(const parity_device_t *dev) { return &dev->plugin->mod->api; }

/* ---- buffers ---------------------------------------------------------------------------- */
parity_status_t parity_buffer_alloc(parity_device_t *dev, uint64_t size, parity_buffer_t **out) {
  if (!dev || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "buffer_alloc: NULL argument");
  parity_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
  parity__clear_error();
  int32_t st = dev->plugin->mod->api.buffer_alloc(dev->handle, size, &b->handle);
  if (st != PARITY_STATUS_OK) {
    free(b);
    if (!parity_last_error()[0])
      parity__fail(st, "buffer_alloc of %llu bytes on '%s' failed", (unsigned long long)size, dev->plugin->name);
    return st;
  }
  if (!b->handle || parity__buffer_lookup(dev, b->handle)) {
    /* untrusted: a NULL or already-live handle would alias another buffer */
    const char *what = b->handle ? "an already-live" : "no";
    if (b->handle) dev->plugin->mod->api.buffer_free(dev->handle, b->handle);
    free(b);
    return parity__fail(PARITY_STATUS_INTERNAL,
                        "buffer_alloc: plugin '%s' returned OK with %s buffer "
                        "handle",
                        dev->plugin->name, what);
  }
  b->dev = dev;
  b->size = size;
  if (live_insert(dev, b) != 0) {
    dev->plugin->mod->api.buffer_free(dev->handle, b->handle);
    free(b);
    return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
  }
  if (dev->ctx->alloc_hook) dev->ctx->alloc_hook(dev->ctx->alloc_hook_user, (int64_t)size);
  *out = b;
  return PARITY_STATUS_OK;
}

void parity_buffer_free(parity_buffer_t *b) {
  if (!b) return;
  parity_device_t *dev = b->dev;
  uint64_t k = live_find(dev, b->handle);
  if (k != UINT64_MAX) {
    dev->live[k] = LIVE_TOMB;
    dev->live_count--;
  }
  dev->plugin->mod->api.buffer_free(dev->handle, b->handle);
  if (dev->ctx->alloc_hook) dev->ctx->alloc_hook(dev->ctx->alloc_hook_user, -(int64_t)b->size);
  free(b);
}

uint64_t parity_buffer_size(const parity_buffer_t *b) { return b ? b->size : 0; }
parity_plugin_buffer_t *parity_buffer_handle(const parity_buffer_t *b) { return b ? b->handle : NULL; }

static parity_status_t check_range(const parity_buffer_t *b, uint64_t off, uint64_t size, const char *what) {
  if (!b) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: buffer is NULL", what);
  if (off > b->size || size > b->size - off)
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                        "%s: range [%llu, %llu) is outside the %llu-byte "
                        "buffer",
                        what, (unsigned long long)off, (unsigned long long)(off + size), (unsigned long long)b->size);
  return PARITY_STATUS_OK;
}

parity_status_t parity_buffer_write(parity_buffer_t *b, uint64_t off, const void *src, uint64_t size) {
  parity_status_t st = check_range(b, off, size, "buffer_write");
  if (st != PARITY_STATUS_OK || size == 0) return st;
  if (!src) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "buffer_write: source is NULL");
  return b->dev->plugin->mod->api.buffer_write(b->dev->handle, b->handle, off, src, size);
}

parity_status_t parity_buffer_read(parity_buffer_t *b, uint64_t off, void *dst, uint64_t size) {
  parity_status_t st = check_range(b, off, size, "buffer_read");
  if (st != PARITY_STATUS_OK) return st;
  if (size == 0) return parity_device_synchronize(b->dev);
  if (!dst) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "buffer_read: destination is NULL");
  return b->dev->plugin->mod->api.buffer_read(b->dev->handle, b->handle, off, dst, size);
}

parity_status_t parity_buffer_copy(parity_buffer_t *src, uint64_t src_off, parity_buffer_t *dst, uint64_t dst_off,
                                   uint64_t size) {
  parity_status_t st = check_range(src, src_off, size, "buffer_copy source");
  if (st == PARITY_STATUS_OK) st = check_range(dst, dst_off, size, "buffer_copy destination");
  if (st != PARITY_STATUS_OK || size == 0) return st;
  if (src->dev != dst->dev)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "buffer_copy: buffers live on different "
                        "devices ('%s' and '%s')",
                        src->dev->plugin->name, dst->dev->plugin->name);
  return src->dev->plugin->mod->api.buffer_copy(src->dev->handle, src->handle, src_off, dst->handle, dst_off, size);
}

parity_status_t parity_buffer_fill(parity_buffer_t *b, uint64_t off, uint64_t size, const void *pattern,
                                   uint32_t pattern_size) {
  parity_status_t st = check_range(b, off, size, "buffer_fill");
  if (st != PARITY_STATUS_OK) return st;
  if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8) ||
      size % pattern_size != 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "buffer_fill: pattern size %u must be 1, 2, "
                        "4 or 8 and divide the %llu-byte range",
                        pattern_size, (unsigned long long)size);
  if (size == 0) return PARITY_STATUS_OK;
  return b->dev->plugin->mod->api.buffer_fill(b->dev->handle, b->handle, off, size, pattern, pattern_size);
}

parity_status_t parity_device_synchronize(parity_device_t *dev) {
  if (!dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "synchronize: device is NULL");
  return dev->plugin->mod->api.synchronize(dev->handle);
}
