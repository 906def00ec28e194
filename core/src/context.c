/* context.c — context creation from options and environment, plugin records, backend
 * selection (PARITY_BACKEND / PARITY_DEVICE) and the "what is available" listing. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/parse.h"
#include "internal.h"

void parity_context_options_init(parity_context_options_t *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->device_index = -1;
  opts->log_level = -1;
  opts->search_default_dirs = 1;
}

/* PARITY_LOG: quiet (or off), warn (the default), debug; anything else is refused */
static const char *const log_words[] = {"quiet", "off", "warn", "debug", NULL};
static const int log_levels[] = {0, 0, 1, 2};

parity_status_t parity_context_create(const parity_context_options_t *opts, parity_context_t **out_ctx) {
  if (!out_ctx) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "context_create: out_ctx is NULL");
  *out_ctx = NULL;
  parity_context_options_t o;
  parity_context_options_init(&o);
  if (opts) {
    if (opts->struct_size < offsetof(parity_context_options_t, search_default_dirs))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "context_create: options struct_size %u is too small; call "
                          "parity_context_options_init()",
                          opts->struct_size);
    memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  }
  parity_context_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "context_create: out of memory");
  atomic_init(&ctx->refs, 1);
  const char *backend = o.backend ? o.backend : psup_getenv("PARITY_BACKEND");
  snprintf(ctx->backend, sizeof ctx->backend, "%s", backend && *backend ? backend : "auto");
  char msg[200];
  int word = 2;
  long long index = o.device_index;
  if ((o.log_level < 0 && psup_env_choice("PARITY_LOG", log_words, 2, &word, msg, sizeof msg) != 0) ||
      (o.device_index < 0 && psup_env_int("PARITY_DEVICE", 0, 4095, 0, &index, msg, sizeof msg) != 0)) {
    free(ctx);
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "context_create: %s", msg);
  }
  static const char *const verify_words[] = {"off", "cpu", NULL};
  int ignored;
  uint64_t limit;
  const char *cache_limit = psup_getenv("PARITY_CACHE_LIMIT");
  if (psup_env_choice("PARITY_VERIFY", verify_words, 0, &ignored, msg, sizeof msg) != 0 ||
      psup_env_flag("PARITY_PLAN_PREPARE", 1, &ignored, msg, sizeof msg) != 0 ||
      psup_env_flag("PARITY_PLAN_PRUNE", 1, &ignored, msg, sizeof msg) != 0 ||
      (cache_limit && *cache_limit && parity__parse_cache_limit(cache_limit, &limit) != 0 &&
       snprintf(msg, sizeof msg, "PARITY_CACHE_LIMIT='%.40s' is not a size (bytes, or with K, M or G: 0, 512M, 2G)",
                cache_limit) > 0)) {
    free(ctx);
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "context_create: %s", msg);
  }
  ctx->log_level = o.log_level >= 0 ? o.log_level : log_levels[word];
  ctx->device_index = (int32_t)index;
  atomic_store(&parity__plugin_log_level, ctx->log_level);
  parity__log(ctx, 2, "backend request '%s', device %d", ctx->backend, ctx->device_index);
  const char *path = o.plugin_path ? o.plugin_path : psup_getenv("PARITY_PLUGIN_PATH");
  parity__load_plugins(ctx, path, o.search_default_dirs != 0);
  parity__clear_error();
  *out_ctx = ctx;
  return PARITY_STATUS_OK;
}

void parity__context_retain(parity_context_t *ctx) { atomic_fetch_add(&ctx->refs, 1); }

void parity__context_release(parity_context_t *ctx) {
  if (atomic_fetch_sub(&ctx->refs, 1) != 1) return;
  parity__unload_plugins(ctx);
  for (uint32_t i = 0; i < ctx->note_count; i++) free(ctx->notes[i]);
  free(ctx);
}

/* The caller's reference goes; devices close and plugins unload once the last tensor, optimizer
 * and plan made from the context is released too. */
void parity_context_destroy(parity_context_t *ctx) {
  if (!ctx || ctx->destroyed) return;
  ctx->destroyed = 1;
  parity__context_release(ctx);
}

uint32_t parity_context_plugin_count(const parity_context_t *ctx) { return ctx ? ctx->plugin_count : 0; }

static parity_status_t plugin_record(const parity_context_t *ctx, uint32_t index, parity_plugin_record_t *out,
                                     int ensure) {
  if (!ctx || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "context_plugin: NULL argument");
  if (index >= ctx->plugin_count)
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE, "context_plugin: index %u, only %u plugin(s)", index,
                        ctx->plugin_count);
  if (ensure) parity__plugin_ensure((parity_context_t *)ctx, index); /* a listed plugin is a loaded one */
  const parity__plugin *p = &ctx->plugins[index];
  out->path = p->path;
  out->name = p->name;
  out->backend = p->backend;
  out->version = p->version;
  out->state = p->state;
  out->reason = p->reason;
  out->abi_major = p->abi_major;
  out->abi_minor = p->abi_minor;
  out->device_count = p->state == PARITY_PLUGIN_STATE_LOADED ? p->device_count : 0;
  if (p->deferred) out->state = PARITY_PLUGIN_STATE_DEFERRED;
  return PARITY_STATUS_OK;
}

parity_status_t parity_context_plugin(const parity_context_t *ctx, uint32_t index, parity_plugin_record_t *out) {
  return plugin_record(ctx, index, out, 1);
}

parity_status_t parity_context_plugin_peek(const parity_context_t *ctx, uint32_t index, parity_plugin_record_t *out) {
  return plugin_record(ctx, index, out, 0);
}

uint32_t parity_context_note_count(const parity_context_t *ctx) { return ctx ? ctx->note_count : 0; }

const char *parity_context_note(const parity_context_t *ctx, uint32_t index) {
  return ctx && index < ctx->note_count ? ctx->notes[index] : NULL;
}

const char *parity_context_backend_request(const parity_context_t *ctx) { return ctx ? ctx->backend : NULL; }

parity_status_t parity_context_device_info(const parity_context_t *ctx, uint32_t plugin, uint32_t device,
                                           parity_device_info_t *out) {
  if (!ctx || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "device_info: NULL argument");
  if (plugin >= ctx->plugin_count || !parity__plugin_ensure((parity_context_t *)ctx, plugin))
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE, "device_info: plugin %u is not loaded", plugin);
  const parity__plugin *p = &ctx->plugins[plugin];
  if (device >= p->device_count)
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                        "device_info: plugin '%s' has %u device(s), "
                        "asked for %u",
                        p->name, p->device_count, device);
  uint32_t size = out->struct_size;
  if (size < offsetof(parity_device_info_t, name))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "device_info: struct_size %u too small", size);
  /* The plugin writes into host memory of the host's size; the caller gets at most its own size. */
  parity_device_info_t info;
  int32_t st = parity__plugin_device_info(&p->mod->api, device, &info);
  if (st != PARITY_STATUS_OK) return (parity_status_t)st;
  if (size > sizeof info) size = sizeof info;
  memcpy(out, &info, size);
  out->struct_size = size;
  return PARITY_STATUS_OK;
}

const char *parity_context_available(parity_context_t *ctx) {
  if (!ctx) return "no context (NULL)";
  size_t n = 0, cap = sizeof ctx->available;
  ctx->available[0] = 0;
  for (uint32_t i = 0; i < ctx->plugin_count && n < cap; i++) {
    parity__plugin_ensure(ctx, i);
    const parity__plugin *p = &ctx->plugins[i];
    const char *label = p->name[0] ? p->name : p->path;
    if (p->state == PARITY_PLUGIN_STATE_LOADED)
      n += (size_t)snprintf(ctx->available + n, cap - n, "%s%s (%u device%s)", n ? ", " : "", label, p->device_count,
                            p->device_count == 1 ? "" : "s");
    else
      n += (size_t)snprintf(ctx->available + n, cap - n, "%s%s (%s)", n ? ", " : "", label,
                            p->state == PARITY_PLUGIN_STATE_UNAVAILABLE ? "unavailable" : "skipped");
  }
  if (!ctx->available[0]) snprintf(ctx->available, cap, "no plugins found");
  return ctx->available;
}

/* "; did you mean vulkan?" for a name close to a plugin's name or backend (or auto), else "". */
static void closest_backend_hint(const parity_context_t *ctx, const char *name, char *hint, size_t n) {
  const char *names[2 * PARITY_MAX_PLUGINS + 1];
  size_t k = 0;
  for (uint32_t i = 0; i < ctx->plugin_count; i++) {
    names[k++] = ctx->plugins[i].name;
    names[k++] = ctx->plugins[i].backend;
  }
  names[k++] = "auto";
  const char *near = psup_closest(name, names, k);
  snprintf(hint, n, "%s%s%s", near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
}

parity_status_t parity_context_find_plugin(parity_context_t *ctx, const char *name, uint32_t *out_plugin) {
  if (!ctx || !name || !out_plugin) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "find_plugin: NULL argument");
  /* an exact plugin name wins over a backend kind */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < ctx->plugin_count; i++) {
      const parity__plugin *p = &ctx->plugins[i];
      if (strcmp(pass ? p->backend : p->name, name) != 0) continue;
      if (parity__plugin_ensure(ctx, i)) {
        *out_plugin = i;
        return PARITY_STATUS_OK;
      }
    }
  for (uint32_t i = 0; i < ctx->plugin_count; i++) {
    const parity__plugin *p = &ctx->plugins[i];
    if (strcmp(p->name, name) == 0 || strcmp(p->backend, name) == 0)
      return parity__fail(PARITY_STATUS_UNAVAILABLE,
                          "backend '%s' is %s: %s (plugin %s); "
                          "available: %s",
                          name, p->state == PARITY_PLUGIN_STATE_UNAVAILABLE ? "unavailable" : "skipped", p->reason,
                          p->path, parity_context_available(ctx));
  }
  char hint[96];
  closest_backend_hint(ctx, name, hint, sizeof hint);
  return parity__fail(PARITY_STATUS_NOT_FOUND,
                      "unknown backend '%s'; available: %s; also "
                      "accepted: auto%s",
                      name, parity_context_available(ctx), hint);
}

parity_status_t parity_context_open_device(parity_context_t *ctx, uint32_t plugin, uint32_t device,
                                           parity_device_t **out_dev) {
  if (!ctx || !out_dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "open_device: NULL argument");
  if (plugin >= ctx->plugin_count || !parity__plugin_ensure(ctx, plugin))
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                        "open_device: plugin %u is not loaded; "
                        "available: %s",
                        plugin, parity_context_available(ctx));
  parity__plugin *p = &ctx->plugins[plugin];
  if (device >= p->device_count) {
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                        "device index %u is out of range: backend "
                        "'%s' has %u device(s) (valid: 0..%d); available: %s",
                        device, p->name, p->device_count, (int)p->device_count - 1, parity_context_available(ctx));
  }
  if (!p->devices[device]) {
    parity_status_t st = parity__device_open(ctx, p, device, &p->devices[device]);
    if (st != PARITY_STATUS_OK) {
      snprintf(p->reason, sizeof p->reason, "device %u open failed: %s", device, parity_last_error());
      parity__log(ctx, 1, "plugin %s: %s", p->path, p->reason);
      return parity__fail(st, "backend '%s': %s", p->name, p->reason);
    }
  }
  *out_dev = p->devices[device];
  return PARITY_STATUS_OK;
}

/* auto: real GPUs by backend preference, then the native CPU plugin. */
static parity_status_t select_auto(parity_context_t *ctx, parity_device_t **out) {
  static const char *const gpu_order[] = {"cuda", "vulkan", "opencl", NULL};
  /* backend preference first, file order only among plugins of one backend */
  for (int g = 0; g < 4; g++) {
    const char *want = gpu_order[g]; /* NULL: any other backend */
    for (uint32_t i = 0; i < ctx->plugin_count; i++) {
      parity__plugin *p = &ctx->plugins[i];
      if (!parity__plugin_ensure(ctx, i)) continue;
      if (want && strcmp(p->backend, want) != 0) continue;
      if (!want &&
          (strcmp(p->backend, "cuda") == 0 || strcmp(p->backend, "vulkan") == 0 || strcmp(p->backend, "opencl") == 0))
        continue;
      for (uint32_t d = 0; d < p->device_count; d++) {
        parity_device_info_t info = {.struct_size = sizeof info};
        if (parity_context_device_info(ctx, i, d, &info) != PARITY_STATUS_OK) continue;
        if (info.type != PARITY_DEVICE_TYPE_GPU) continue;
        parity__log(ctx, 2, "auto: trying GPU '%s' of plugin '%s'", info.name, p->name);
        if (parity_context_open_device(ctx, i, d, out) == PARITY_STATUS_OK) return PARITY_STATUS_OK;
      }
    }
  }
  for (uint32_t i = 0; i < ctx->plugin_count; i++) {
    parity__plugin *p = &ctx->plugins[i];
    if (!parity__plugin_ensure(ctx, i) || strcmp(p->backend, "cpu") != 0) continue;
    for (uint32_t d = 0; d < p->device_count; d++) {
      parity_device_info_t info = {.struct_size = sizeof info};
      if (parity_context_device_info(ctx, i, d, &info) != PARITY_STATUS_OK || info.type != PARITY_DEVICE_TYPE_CPU)
        continue;
      parity__log(ctx, 2, "auto: no usable GPU; choosing CPU plugin '%s'", p->name);
      if (parity_context_open_device(ctx, i, d, out) == PARITY_STATUS_OK) return PARITY_STATUS_OK;
    }
  }
  return parity__fail(PARITY_STATUS_UNAVAILABLE,
                      "PARITY_BACKEND=auto found no usable GPU or CPU "
                      "device; available: %s",
                      parity_context_available(ctx));
}

parity_status_t parity_context_default_device(parity_context_t *ctx, parity_device_t **out_dev) {
  if (!ctx || !out_dev) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "default_device: NULL argument");
  if (ctx->default_device) {
    *out_dev = ctx->default_device;
    return PARITY_STATUS_OK;
  }
  parity_status_t st;
  if (strcmp(ctx->backend, "auto") == 0) {
    st = select_auto(ctx, &ctx->default_device);
  } else {
    uint32_t plugin;
    st = parity_context_find_plugin(ctx, ctx->backend, &plugin);
    if (st == PARITY_STATUS_NOT_FOUND) {
      char hint[96];
      closest_backend_hint(ctx, ctx->backend, hint, sizeof hint);
      st = parity__fail(st,
                        "PARITY_BACKEND='%s' names no plugin; available: %s; also accepted: "
                        "auto%s",
                        ctx->backend, parity_context_available(ctx), hint);
    }
    if (st == PARITY_STATUS_OK) {
      if ((uint32_t)ctx->device_index >= ctx->plugins[plugin].device_count) {
        st = parity__fail(PARITY_STATUS_OUT_OF_RANGE,
                          "PARITY_DEVICE=%d is out of range: backend "
                          "'%s' has %u device(s) (valid: 0..%d); available: %s",
                          ctx->device_index, ctx->plugins[plugin].name, ctx->plugins[plugin].device_count,
                          (int)ctx->plugins[plugin].device_count - 1, parity_context_available(ctx));
      } else {
        st = parity_context_open_device(ctx, plugin, (uint32_t)ctx->device_index, &ctx->default_device);
      }
    }
  }
  if (st == PARITY_STATUS_OK) {
    *out_dev = ctx->default_device;
    parity__log(ctx, 2, "selected device %u of plugin '%s' (%s)", ctx->default_device->index,
                ctx->default_device->plugin->name, ctx->default_device->info.name);
  }
  return st;
}

void parity_context_set_alloc_hook(parity_context_t *ctx, parity_alloc_hook_fn hook, void *user) {
  if (!ctx) return;
  ctx->alloc_hook = hook;
  ctx->alloc_hook_user = user;
}
