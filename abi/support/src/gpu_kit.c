/* gpu_kit.c — the host kit for queue-and-buffer plugins (parity_support/gpu_kit.h): messages with
 * the backend prefix once, the device slot table, supports() and the kernel entries driven by
 * the families table, buffer-argument checks. */
#include "parity_support/gpu_kit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/buffer_args.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/env.h"
#include "parity_support/ops.h"

/* ---- messages -------------------------------------------------------------------------------- */
void psup_kit_set_host(psup_kit_t *k, const parity_host_api_t *host) { k->host = host; }

static void prefixed(const psup_kit_t *k, char *buf, size_t n, const char *fmt, va_list ap) {
  int len = snprintf(buf, n, "%s: ", k->backend);
  if (len < 0 || (size_t)len >= n) len = 0;
  vsnprintf(buf + len, n - (size_t)len, fmt, ap);
}

int32_t psup_kit_fail(const psup_kit_t *k, int32_t status, const char *fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  prefixed(k, buf, sizeof buf, fmt, ap);
  va_end(ap);
  return psup_report(k->host, status, "%s", buf);
}

void psup_kit_log(const psup_kit_t *k, int32_t level, const char *fmt, ...) {
  if (!k->host || !k->host->log) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  prefixed(k, buf, sizeof buf, fmt, ap);
  va_end(ap);
  psup_log(k->host, level, "%s", buf);
}

int32_t psup_kit_driver_fail(const psup_kit_t *k, int32_t status, const char *call, const char *name, const char *api,
                             long long code, const char *what) {
  char unknown[64];
  if (!name) {
    snprintf(unknown, sizeof unknown, "unknown %s %lld", api, code);
    name = unknown;
  }
  if (status == PARITY_STATUS_OK) status = PARITY_STATUS_INTERNAL;
  if (what && *what) return psup_kit_fail(k, status, "%s: %s (%s)", call, name, what);
  return psup_kit_fail(k, status, "%s: %s", call, name);
}

/* ---- device slots ---------------------------------------------------------------------------- */
void psup_kit_slots_reset(psup_kit_t *k) { k->slot_count = 0; }

void *psup_kit_slot_at(const psup_kit_t *k, uint32_t index) {
  return index < k->slot_count ? (char *)k->slots + (size_t)index * k->slot_size : NULL;
}

void *psup_kit_slot_add(psup_kit_t *k, const char *name) {
  if (k->slot_count >= k->max_slots) {
    psup_kit_log(k, PARITY_LOG_WARNING, "more than %u devices; ignoring '%s'", k->max_slots, name ? name : "?");
    return NULL;
  }
  void *s = (char *)k->slots + (size_t)k->slot_count++ * k->slot_size;
  memset(s, 0, k->slot_size);
  return s;
}

int32_t psup_kit_device_open(const psup_kit_t *k, uint32_t index, parity_plugin_device_t **out) {
  if (!psup_kit_slot_at(k, index))
    return psup_kit_fail(k, PARITY_STATUS_OUT_OF_RANGE, "device %u does not exist (%u devices)", index, k->slot_count);
  parity_plugin_device_t *dev = calloc(1, k->device_size);
  if (!dev) return psup_kit_fail(k, PARITY_STATUS_OUT_OF_MEMORY, "device_open: out of host memory");
  int32_t st = k->device_init(dev, index);
  if (st != PARITY_STATUS_OK) {
    k->device_close(dev);
    return st;
  }
  *out = dev;
  return PARITY_STATUS_OK;
}

void psup_kit_slot_ready(const psup_kit_t *k, psup_kit_slot_t *s) {
  s->info.struct_size = sizeof s->info;
  s->caps.backend = k->backend;
  s->caps.device = s->info.name;
  s->caps.dtype_mask = s->info.dtype_mask;
}

int32_t psup_kit_device_count(const psup_kit_t *k, uint32_t *out) {
  *out = k->slot_count;
  return PARITY_STATUS_OK;
}

int32_t psup_kit_device_info(const psup_kit_t *k, uint32_t index, parity_device_info_t *out) {
  const psup_kit_slot_t *s = psup_kit_slot_at(k, index);
  if (!s)
    return psup_kit_fail(k, PARITY_STATUS_OUT_OF_RANGE, "device %u does not exist (%u devices)", index, k->slot_count);
  parity_device_info_t info = s->info;
  uint32_t size = out->struct_size < sizeof info ? out->struct_size : (uint32_t)sizeof info;
  info.struct_size = size;
  memcpy(out, &info, size);
  return PARITY_STATUS_OK;
}

/* ---- dispatch -------------------------------------------------------------------------------- */
int32_t psup_kit_check_alignment(const psup_kit_t *k, const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (t && t->offset_bytes % psup_dtype_size(t->dtype))
        return psup_kit_fail(k, PARITY_STATUS_UNSUPPORTED,
                             "%s: %s %u starts at byte offset %llu, not a multiple of its %u-byte element",
                             psup_op_name(d->op), pass ? "output" : "input", i, (unsigned long long)t->offset_bytes,
                             psup_dtype_size(t->dtype));
    }
  }
  return PARITY_STATUS_OK;
}

static const psup_kit_family_t *family_of(const psup_kit_t *k, int32_t family) {
  return family > 0 && family < PSUP_KIT_FAMILY_SLOTS ? &k->family[family] : NULL;
}

int32_t psup_kit_supports(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  /* the host validated the descriptor (parity_plugin.h): answer the capability question */
  int32_t family = psup_kind_family(psup_op_info(d->op)->kind);
  const psup_kit_family_t *f = family_of(k, family);
  if (!f || !f->forward)
    return psup_kit_fail(k, PARITY_STATUS_UNSUPPORTED, "%s: the %s family is not implemented", psup_op_name(d->op),
                         psup_family_name(family));
  int32_t st = psup_kit_check_alignment(k, d);
  if (st != PARITY_STATUS_OK) return st;
  char msg[512];
  st = psup_check_operands(d, &k->slot_of(dev)->caps, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return psup_report(k->host, st, "%s", msg); /* prefixed by the contract */
  if (k->check && (st = k->check(dev, d)) != PARITY_STATUS_OK) return st;
  return f->supports ? f->supports(dev, d) : PARITY_STATUS_OK;
}

/* Kernel entries check only what is cheap (the host validated the descriptor and asked
 * supports() first: parity_plugin.h). */
int32_t psup_kit_launch(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_op_desc_t *d, int32_t family,
                        int32_t direction) {
  char msg[512];
  int32_t st = psup_check_kernel_entry(d, family, direction, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return psup_kit_fail(k, st, "%s", msg);
  const psup_kit_family_t *f = family_of(k, family);
  psup_kit_op_fn run = !f ? NULL : direction == PARITY_DIRECTION_BACKWARD ? f->backward : f->forward;
  if (!run)
    return psup_kit_fail(k, PARITY_STATUS_UNSUPPORTED, "%s: the %s family is not implemented", psup_op_name(d->op),
                         psup_family_name(family));
  if (k->enter && (st = k->enter(dev)) != PARITY_STATUS_OK) return st;
  return run(dev, d);
}

/* ---- buffers ---------------------------------------------------------------------------------- */
int32_t psup_kit_check_alloc(const psup_kit_t *k, const psup_kit_slot_t *s, uint64_t size, const char *limit) {
  uint64_t max = s->info.max_buffer_bytes;
  if (size <= max) return PARITY_STATUS_OK;
  return psup_kit_fail(k, PARITY_STATUS_OUT_OF_MEMORY, "cannot allocate %llu bytes: larger than %s (%llu bytes) of %s",
                       (unsigned long long)size, limit, (unsigned long long)max, s->info.name);
}

/* ---- scratch memory ------------------------------------------------------------------------ */
int psup_kit_scratch_mode(const psup_kit_t *k, int *mode, char *err, size_t n) {
  static const char *const modes[] = {"rounded", "exact", NULL};
  char name[64];
  size_t i = 0;
  for (const char *c = k->backend; *c && i < 40; c++) name[i++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
  name[i] = 0;
  char var[80];
  snprintf(var, sizeof var, "PARITY_%s_SCRATCH", name);
  return psup_env_choice(var, modes, PSUP_SCRATCH_ROUNDED, mode, err, n);
}

int psup_kit_scratch_fits(int mode, uint64_t have, uint64_t want) {
  return have != 0 && (mode == PSUP_SCRATCH_EXACT ? have == want : have >= want);
}

uint64_t psup_kit_scratch_size(int mode, uint64_t want, uint64_t max_bytes) {
  if (mode == PSUP_SCRATCH_EXACT || want > UINT64_MAX - 65535u) return want;
  uint64_t size = (want + 65535u) & ~(uint64_t)65535u;
  return size > max_bytes ? want : size;
}

static int32_t range(const psup_kit_t *k, const parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                     const char *what) {
  char msg[256];
  int32_t st = psup_check_buffer_range(b != NULL, b ? k->buffers.size(b) : 0, off, size, what, msg, sizeof msg);
  return st == PARITY_STATUS_OK ? st : psup_kit_fail(k, st, "%s", msg);
}

static int32_t enter(const psup_kit_t *k, parity_plugin_device_t *dev) {
  return k->enter ? k->enter(dev) : PARITY_STATUS_OK;
}

/* A host transfer's checks: the range, a host pointer (named `side`) when there are bytes, the device
 * entered. */
static int32_t host_transfer(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_plugin_buffer_t *b,
                             uint64_t off, uint64_t size, const void *host, const char *what, const char *side) {
  int32_t st = range(k, b, off, size, what);
  if (st == PARITY_STATUS_OK && size && !host)
    st = psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", what, side);
  return st != PARITY_STATUS_OK ? st : enter(k, dev);
}

int32_t psup_kit_buffer_write(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                              const void *src, uint64_t size) {
  int32_t st = host_transfer(k, dev, b, off, size, src, "buffer_write", "source");
  return st != PARITY_STATUS_OK ? st : k->buffers.write(dev, b, off, src, size);
}

int32_t psup_kit_buffer_read(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                             void *dst, uint64_t size) {
  int32_t st = host_transfer(k, dev, b, off, size, dst, "buffer_read", "destination");
  return st != PARITY_STATUS_OK ? st : k->buffers.read(dev, b, off, dst, size);
}

int32_t psup_kit_buffer_copy(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *src,
                             uint64_t src_off, parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size) {
  int32_t st = range(k, src, src_off, size, "buffer_copy source");
  if (st == PARITY_STATUS_OK) st = range(k, dst, dst_off, size, "buffer_copy destination");
  if (st == PARITY_STATUS_OK) st = enter(k, dev);
  return st != PARITY_STATUS_OK ? st : k->buffers.copy(dev, src, src_off, dst, dst_off, size);
}

int32_t psup_kit_buffer_fill(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                             uint64_t size, const void *pattern, uint32_t psize) {
  int32_t st = range(k, b, off, size, "buffer_fill");
  if (st != PARITY_STATUS_OK) return st;
  char msg[64];
  st = psup_check_fill_pattern(pattern, psize, size, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return psup_kit_fail(k, st, "%s", msg);
  if ((st = enter(k, dev)) != PARITY_STATUS_OK) return st;
  return k->buffers.fill(dev, b, off, size, pattern, psize);
}

/* ---- prepared plans ------------------------------------------------------------------------- */
static int32_t issue(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_plan_command_t *c) {
  if (c->kind == PARITY_PLAN_COMMAND_KERNEL) {
    const parity_op_desc_t *d = c->op;
    const psup_op_info_t *info = d ? psup_op_info(d->op) : NULL;
    if (!info) return psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "a kernel command without a known op");
    return psup_kit_launch(k, dev, d, psup_kind_family(info->kind), d->direction);
  }
  if (c->kind == PARITY_PLAN_COMMAND_FILL)
    return psup_kit_buffer_fill(k, dev, c->buffer, c->offset_bytes, c->size_bytes, c->pattern, c->pattern_size);
  return psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "unknown command kind %d", (int)c->kind);
}

int32_t psup_kit_plan_prepare(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_plan_command_t *cmds,
                              uint32_t count, parity_plugin_plan_t **out) {
  if (!k->plans.begin || !k->plans.end || !k->plans.run || !k->plans.release)
    return psup_kit_fail(k, PARITY_STATUS_UNSUPPORTED, "plan_prepare: this plugin has no prepared plans");
  if (!out || (!cmds && count)) return psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "plan_prepare: NULL argument");
  *out = NULL;
  int32_t st = enter(k, dev);
  if (st == PARITY_STATUS_OK) st = k->plans.begin(dev);
  if (st != PARITY_STATUS_OK) return st;
  for (uint32_t i = 0; i < count; i++) {
    const parity_plan_command_t *c = &cmds[i];
    st = c->struct_size < sizeof *c
             ? psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "struct_size %u is too small", (unsigned)c->struct_size)
             : issue(k, dev, c);
    if (st != PARITY_STATUS_OK) {
      parity_plugin_plan_t *none = NULL;
      k->plans.end(dev, 0, &none);
      return st; /* the failing entry reported its message (UNSUPPORTED: the host replays eagerly) */
    }
  }
  st = k->plans.end(dev, 1, out);
  if (st == PARITY_STATUS_OK && !*out)
    return psup_kit_fail(k, PARITY_STATUS_INTERNAL, "plan_prepare: the recording produced no plan");
  return st;
}

int32_t psup_kit_plan_run(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  if (!plan) return psup_kit_fail(k, PARITY_STATUS_INVALID_ARGUMENT, "plan_run: NULL plan");
  int32_t st = enter(k, dev);
  return st != PARITY_STATUS_OK ? st : k->plans.run(dev, plan);
}

void psup_kit_plan_release(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  if (plan && k->plans.release) {
    enter(k, dev);
    k->plans.release(dev, plan);
  }
}
