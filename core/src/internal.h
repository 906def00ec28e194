/* internal.h — libparity's private types. Nothing here crosses the public API. */
#ifndef PARITY_INTERNAL_H
#define PARITY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "parity/device.h"
#include "parity_plugin.h"

#define PARITY_MAX_PLUGINS 32
#define PARITY_MAX_NOTES 16
/* More devices than this from one plugin is a misbehaving plugin: it is skipped. */
#define PARITY_MAX_DEVICES_PER_PLUGIN 64

/* One loaded, negotiated and initialised plugin library. Process-wide and reference-counted,
 * so two contexts never initialise or shut down the same plugin twice. */
typedef struct parity__module {
  char *realpath;
  void *dl;
  parity_plugin_info_t info; /* what the plugin answered */
  parity_plugin_api_t api;   /* the plugin's table copied within its struct_size, rest NULL */
  uint32_t device_count;
  int refs;
  struct parity__module *next;
} parity__module;

/* One discovered plugin file, as this context sees it. */
typedef struct parity__plugin {
  char *path;
  parity__module *mod; /* NULL unless state is LOADED */
  int32_t state;       /* parity_plugin_state_t */
  char reason[512];
  char name[64], backend[64], version[64];
  uint32_t abi_major, abi_minor;
  uint32_t device_count;
  parity_device_t **devices; /* opened devices, by index (device_count entries) */
  int deferred;              /* identified only; loaded on first use (parity__plugin_ensure) */
  int noted;                 /* identified from its identity note: noted_* must match the query */
  char noted_name[64], noted_backend[64];
} parity__plugin;

struct parity_context_t {
  /* 1 for the caller (until parity_context_destroy) + 1 per plan + 1 per device that has live
   * storages (parity_device_t.storages): the context and its devices outlive every tensor, op
   * and plan made from them */
  _Atomic int refs;
  int destroyed;
  parity__plugin plugins[PARITY_MAX_PLUGINS];
  uint32_t plugin_count;
  char *notes[PARITY_MAX_NOTES];
  uint32_t note_count;
  char backend[64];
  int32_t device_index;
  int32_t log_level;
  parity_device_t *default_device;
  char available[1024];
  parity_alloc_hook_fn alloc_hook;
  void *alloc_hook_user;
};

/* One size class of the caching allocator: free buffers of exactly 2^k bytes. */
typedef struct parity__cache_bin {
  parity_buffer_t **items;
  uint32_t count, cap;
} parity__cache_bin;

struct parity_device_t {
  parity_context_t *ctx;
  parity__plugin *plugin;
  uint32_t index;
  parity_plugin_device_t *handle;
  parity_device_info_t info;
  parity__cache_bin cache[64]; /* caching allocator, by log2 of the size class */
  uint64_t cached_bytes;
  uint64_t cache_limit;       /* most bytes kept cached (PARITY_CACHE_LIMIT; see alloc.c) */
  uint64_t supported[64];     /* classes supports() said OK to (PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS); 0 = empty */
  parity_plan_t *capture;     /* plan being recorded on this device, if any */
  const void *capture_thread; /* parity__thread_token() of the thread recording it */
  uint64_t launches;          /* ops enqueued (numbers them in verification reports) */
  uint64_t storages;          /* live storages (alloc.c); while there are any, the device holds
                                    one reference to its context, so a storage costs no atomic */
  uint64_t verify_checked;    /* PARITY_VERIFY=cpu: ops compared with the CPU plugin */
  uint64_t verify_skipped;    /* ops it could not compare (i64 operands, no CPU plugin) */
  char *verify_report;        /* the first op that broke its bound (NULL: none yet) */
  /* every live buffer of this device by plugin handle (open addressing), so parity_device_run
   * can check that an operand's buffer belongs here and that the operand fits inside it */
  parity_buffer_t **live;
  uint64_t live_count, live_cap;
};

struct parity_buffer_t {
  parity_device_t *dev;
  parity_plugin_buffer_t *handle;
  uint64_t size;
};

/* context.c: reference counting (see parity_context_t.refs) */
void parity__context_retain(parity_context_t *ctx);
void parity__context_release(parity_context_t *ctx);

/* loader.c: the folder libparity itself was loaded from; 0 on success */
int parity__library_dir(char *out, size_t n);

/* error.c */
parity_status_t parity__fail(parity_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void parity__set_error(parity_status_t status, const char *message);
void parity__clear_error(void);
void parity__log(const parity_context_t *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
extern const parity_host_api_t parity__host_template;
extern _Atomic int parity__plugin_log_level;
/* Copy untrusted text within n bytes, terminated, control characters blanked. */
void parity__copy_text(char *dst, size_t n, const char *src);
/* Ask a plugin for device info into host memory and terminate its strings. */
int32_t parity__plugin_device_info(const parity_plugin_api_t *api, uint32_t device, parity_device_info_t *out);

/* loader.c */
void parity__load_plugins(parity_context_t *ctx, const char *plugin_path, int search_default_dirs);
/* A plugin file's identity note (plugin_note.c), read without loading it: 0 when the file has a
 * valid one (strings terminated), -1 otherwise. The parser reads through read_at (0: all n bytes
 * read), so a fuzzer can feed it memory. */
typedef int (*parity__read_at_fn)(void *src, uint64_t off, void *dst, size_t n);
int parity__identity_parse(parity__read_at_fn read_at, void *src, uint64_t size, parity_plugin_identity_t *out);
int parity__identity_read(const char *path, parity_plugin_identity_t *out);
void parity__unload_plugins(parity_context_t *ctx);
/* Load a deferred plugin now; 1 when it is loaded (state LOADED). */
int parity__plugin_ensure(parity_context_t *ctx, uint32_t index);
void parity__note(parity_context_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* device.c */
parity_status_t parity__device_open(parity_context_t *ctx, parity__plugin *p, uint32_t index,
                                    parity_device_t **out_dev);
void parity__device_close(parity_device_t *dev);
/* alloc.c: the cache limit for a device (PARITY_CACHE_LIMIT or the default) */
/* PARITY_CACHE_LIMIT's syntax: bytes, or with K, M or G. 0, or -1 for text that is not a size. */
int parity__parse_cache_limit(const char *text, uint64_t *out);
uint64_t parity__cache_limit(parity_context_t *ctx, const parity_device_info_t *info);
/* parity_device_run for descriptors libparity built from storages it holds (tensor launches, plan
 * replay): the same validation without the live-buffer lookup. */
/* A caller's option struct (struct_size first; 0 = the layout of this library's header) into a
 * zeroed struct of the library's size, reading only within the caller's struct_size. */
void parity__read_options(const void *src, void *dst, size_t dst_size);
/* `axis` of a rank-`rank` tensor by the one axis rule (psup_axis: -1 = last) into *out, or a
 * message naming `what` and the valid range. */
parity_status_t parity__axis(const char *what, int64_t axis, uint32_t rank, uint32_t *out);
parity_status_t parity__device_run_owned(parity_device_t *dev, const parity_op_desc_t *desc);
/* The plugin's kernel entry for desc's family and direction (NULL when it has none), and its
 * function table: plan replay calls them directly. */
parity_kernel_fn parity__device_entry(const parity_device_t *dev, const parity_op_desc_t *desc);
const parity_plugin_api_t *parity__device_api(const parity_device_t *dev);
/* The live buffer of dev whose plugin handle is h, or NULL. */
parity_buffer_t *parity__buffer_lookup(const parity_device_t *dev, const parity_plugin_buffer_t *h);

/* A token unique to the calling thread (plan.c); parity__recording(dev): the plan this thread
 * records on dev, NULL when none (another thread's plan records only that thread's ops). */
const void *parity__thread_token(void);
#define parity__recording(dev) \
  ((dev)->capture && (dev)->capture_thread == parity__thread_token() ? (dev)->capture : NULL)

/* "adamw beta1=0.9 ... params=4", "sgd momentum=0.9 params=2", "none" for NULL (nn_optim.c): what a
 * checkpoint records so that it loads only into an optimizer made the same way. snprintf's result. */
int parity__optimizer_describe(const parity_optimizer_t *o, char *buf, size_t n);

#endif
