/* parity.h — the public API of libparity.
 *
 * CONVENTIONS
 *   - Every fallible function returns parity_status_t (PARITY_STATUS_OK == 0). On failure the
 *     message for the calling thread is available from parity_last_error() until that thread's
 *     next failing call. Inputs are never modified by a failing call.
 *   - Objects are created by *_create / *_open and released by the matching *_destroy / *_close.
 *     Devices belong to their context and are closed with it.
 *   - A context may be used from several threads only with external synchronization.
 *
 * What an application needs is here (with tensor.h and nn.h, included below). The raw device
 * API — buffers, op descriptors run directly, supports() queries, the allocation hook — is in
 * parity/device.h, for tools, tests and backend authors.
 *
 * ENVIRONMENT (read by parity_context_create when the options leave a field unset)
 *   PARITY_BACKEND      cpu | cuda | vulkan | opencl | a plugin's own name | auto (default)
 *   PARITY_DEVICE       device index within the selected backend (default 0)
 *   PARITY_PLUGIN_PATH  colon-separated folders searched before the build tree and install prefix
 *   PARITY_LOG          debug: print every loader decision to stderr; quiet (or off): print
 *                       nothing; warn (default): skipped plugins and warnings
 * A value that does not parse (PARITY_DEVICE=x1, PARITY_LOG=verbose, a bad PARITY_CACHE_LIMIT,
 * PARITY_VERIFY or PARITY_PLAN_PREPARE) makes parity_context_create fail with INVALID_ARGUMENT and a
 * message quoting it; none is silently replaced by its default.
 */
#ifndef PARITY_H
#define PARITY_H

#include <stddef.h>
#include <stdint.h>

#include "parity_types.h" /* status codes, dtypes, ops, device info: no plugin ABI */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PARITY_BUILDING_LIBRARY)
#define PARITY_API __attribute__((visibility("default")))
#else
#define PARITY_API
#endif

typedef struct parity_context_t parity_context_t;
typedef struct parity_device_t parity_device_t;
typedef struct parity_tensor_t parity_tensor_t; /* tensor.h; declared here so nn.h and tensor.h stand alone */

/* ---- errors ----------------------------------------------------------------------------- */
/* The message of the calling thread's last failure ("" if none). Valid until the next call. */
PARITY_API const char *parity_last_error(void);
/* "ok", "invalid argument", ... */
PARITY_API const char *parity_status_string(parity_status_t status);

/* ---- context ---------------------------------------------------------------------------- */
typedef struct parity_context_options_t {
  uint32_t struct_size;         /* sizeof(parity_context_options_t) */
  const char *backend;          /* NULL: PARITY_BACKEND, else "auto" */
  int32_t device_index;         /* < 0: PARITY_DEVICE, else 0 */
  const char *plugin_path;      /* NULL: PARITY_PLUGIN_PATH */
  int32_t log_level;            /* -1: PARITY_LOG; 0 quiet, 1 warnings (default), 2 debug */
  uint32_t search_default_dirs; /* 1 (default): also search the build tree and install prefix */
} parity_context_options_t;

/* Initialise options to "everything from the environment". */
PARITY_API void parity_context_options_init(parity_context_options_t *opts);

/* Discover and load every plugin. Plugins that fail are recorded as skipped (never fatal);
 * this fails only on out-of-memory or bad arguments. opts may be NULL. */
PARITY_API parity_status_t parity_context_create(const parity_context_options_t *opts, parity_context_t **out_ctx);
PARITY_API void parity_context_destroy(parity_context_t *ctx);

/* ---- plugins ---------------------------------------------------------------------------- */
typedef enum parity_plugin_state_t {
  PARITY_PLUGIN_STATE_LOADED = 1,      /* negotiated and initialised */
  PARITY_PLUGIN_STATE_UNAVAILABLE = 2, /* loaded, but its backend cannot run here */
  PARITY_PLUGIN_STATE_SKIPPED = 3,     /* failed to load, negotiate or initialise */
  PARITY_PLUGIN_STATE_DEFERRED = 4     /* identified from its file, not initialised yet (peek only) */
} parity_plugin_state_t;

typedef struct parity_plugin_record_t {
  const char *path;    /* file it came from */
  const char *name;    /* plugin's own name ("" when it never answered) */
  const char *backend; /* "cpu", "opencl", ... ("" when unknown) */
  const char *version;
  int32_t state;                 /* parity_plugin_state_t */
  const char *reason;            /* why skipped/unavailable (also device-open failures); "" when none */
  uint32_t abi_major, abi_minor; /* what the plugin speaks (0.0 when unknown) */
  uint32_t device_count;
} parity_plugin_record_t;

PARITY_API uint32_t parity_context_plugin_count(const parity_context_t *ctx);
/* Strings stay valid while the context lives. */
PARITY_API parity_status_t parity_context_plugin(const parity_context_t *ctx, uint32_t index,
                                                 parity_plugin_record_t *out_record);
/* The same record without initialising the plugin: a plugin the context deferred (the context was
 * asked for another backend: parity_context_options_t.backend) is described from its file's identity
 * note, with state PARITY_PLUGIN_STATE_DEFERRED and no devices. For tools that initialise each
 * plugin in a child process of their own (parity-conform), so that one that crashes is named. */
PARITY_API parity_status_t parity_context_plugin_peek(const parity_context_t *ctx, uint32_t index,
                                                      parity_plugin_record_t *out_record);
/* Loader notes that are not about one plugin, e.g. a PARITY_PLUGIN_PATH folder that is missing. */
PARITY_API uint32_t parity_context_note_count(const parity_context_t *ctx);
PARITY_API const char *parity_context_note(const parity_context_t *ctx, uint32_t index);
/* Info of device `device` of plugin `plugin` (without opening it). out_info->struct_size must be
 * set by the caller; fields the plugin does not report are left zero. */
PARITY_API parity_status_t parity_context_device_info(const parity_context_t *ctx, uint32_t plugin, uint32_t device,
                                                      parity_device_info_t *out_info);
/* The selection the context was configured with ("auto", "cpu", ...); NULL for a NULL context. */
PARITY_API const char *parity_context_backend_request(const parity_context_t *ctx);
/* "cpu, opencl (unavailable: ...)": every plugin with its state, for messages ("no context (NULL)"
 * for a NULL context). */
PARITY_API const char *parity_context_available(parity_context_t *ctx);

/* ---- devices ---------------------------------------------------------------------------- */
/* The device PARITY_BACKEND / PARITY_DEVICE (or the options) select: `auto` picks a real GPU
 * (CUDA, then Vulkan, then OpenCL, then others), then the native CPU plugin; software devices
 * only when named. Unknown backends and out-of-range indices are errors naming the value and
 * listing what is available. The device is opened once and owned by the context. */
PARITY_API parity_status_t parity_context_default_device(parity_context_t *ctx, parity_device_t **out_dev);
/* Open device `device` of the plugin at `plugin` (index into the plugin list). */
PARITY_API parity_status_t parity_context_open_device(parity_context_t *ctx, uint32_t plugin, uint32_t device,
                                                      parity_device_t **out_dev);
/* Find a loaded plugin by its name or backend; PARITY_STATUS_NOT_FOUND lists what exists. */
PARITY_API parity_status_t parity_context_find_plugin(parity_context_t *ctx, const char *name, uint32_t *out_plugin);

/* Device accessors answer NULL (names, context) or 0 (index) for a NULL device. */
PARITY_API const char *parity_device_plugin_name(const parity_device_t *dev);
PARITY_API const char *parity_device_backend(const parity_device_t *dev);
PARITY_API uint32_t parity_device_index(const parity_device_t *dev);
/* The context the device belongs to. */
PARITY_API parity_context_t *parity_device_context(const parity_device_t *dev);
/* Copy the device info (caller sets out_info->struct_size). */
PARITY_API parity_status_t parity_device_get_info(const parity_device_t *dev, parity_device_info_t *out_info);
/* Wait until every command enqueued on dev has finished. */
PARITY_API parity_status_t parity_device_synchronize(parity_device_t *dev);

/* Shadow verification. With PARITY_VERIFY=cpu in the environment, every op run on a device is
 * also run on the CPU plugin in float64 with the same inputs and judged by the conformance rule
 * (docs/conformance.md); the first op that breaks its bound is logged (PARITY_LOG) and kept.
 * The number of ops compared so far on `dev`, and that first report (NULL while there is none). */
PARITY_API uint64_t parity_device_verify_count(const parity_device_t *dev);
PARITY_API const char *parity_device_verify_report(const parity_device_t *dev);

/* The caching allocator: tensor memory released to a device is kept for reuse, up to the
 * device's cache limit (PARITY_CACHE_LIMIT in bytes, or with a K, M or G suffix; 0 turns caching
 * off; default min(1 GiB, device memory / 8)); it is also emptied when an allocation fails for
 * lack of memory. cache_bytes: what is held now; trim_cache: give all of it back to the plugin,
 * returning how many bytes that was. Both answer 0 for NULL. */
PARITY_API uint64_t parity_device_cache_bytes(const parity_device_t *dev);
PARITY_API uint64_t parity_device_trim_cache(parity_device_t *dev);

#ifdef __cplusplus
}
#endif

#include "parity/tensor.h"
#include "parity/nn.h"

#endif /* PARITY_H */
