/* loader.c — plugin discovery, dlopen, version negotiation and struct-size tolerance.
 *
 * Search order: PARITY_PLUGIN_PATH folders, then the folder parity/ beside libparity itself (where
 * `cmake --install` puts the plugins: <prefix>/lib/parity), and, only when libparity is the build
 * tree's own (build/lib), that folder, which holds the freshly built plugins. No compile-time
 * path is searched by an installed library, so a stale build tree is never an injection path. Files named parity-plugin-*.so are tried in name order. A plugin that
 * fails anywhere is recorded as skipped with a one-line reason; it never stops the others. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "parity_support/ops.h"

#ifndef PARITY_BUILD_PLUGIN_DIR
#define PARITY_BUILD_PLUGIN_DIR ""
#endif

#define PREFIX "parity-plugin-"
#define SUFFIX ".so"
/* Entries up to `supports` are required; kernel families after it may be absent (NULL). */
#define API_REQUIRED_SIZE offsetof(parity_plugin_api_t, elementwise_forward)

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static parity__module *modules;

void parity__note(parity_context_t *ctx, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  parity__log(ctx, 1, "%s", buf);
  if (ctx->note_count < PARITY_MAX_NOTES) ctx->notes[ctx->note_count++] = strdup(buf);
}

static void copy_str(char *dst, size_t n, const char *src) { parity__copy_text(dst, n, src); }

static void skip(parity_context_t *ctx, parity__plugin *p, int32_t state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void skip(parity_context_t *ctx, parity__plugin *p, int32_t state, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->reason, sizeof p->reason, fmt, ap);
  va_end(ap);
  p->state = state;
  /* An unavailable backend is normal (no GPU here); only failures warn by default. */
  parity__log(ctx, state == PARITY_PLUGIN_STATE_SKIPPED ? 1 : 2, "%s %s: %s",
              state == PARITY_PLUGIN_STATE_SKIPPED ? "skipped" : "unavailable", p->path, p->reason);
}

/* Record who a plugin says it is (from its query or its identity note). */
static void set_identity(parity__plugin *p, const char *name, const char *backend, const char *version,
                         uint32_t abi_major, uint32_t abi_minor) {
  copy_str(p->name, sizeof p->name, name);
  copy_str(p->backend, sizeof p->backend, backend);
  copy_str(p->version, sizeof p->version, version);
  p->abi_major = abi_major;
  p->abi_minor = abi_minor;
}

/* Copy what the plugin said about itself into the context's record. */
static void describe(parity__plugin *p, const parity__module *m) {
  set_identity(p, m->info.name, m->info.backend, m->info.version, m->info.abi_major, m->info.abi_minor);
}

/* Why the plugin's answer to query() (status st, m->info) cannot be used, or NULL when it can;
 * on success the function table is copied into m->api within its struct_size. The message is
 * written to buf. */
static const char *negotiation_refusal(const parity__plugin *p, parity__module *m, int32_t st, char *buf, size_t n) {
  char refusal[200];
  parity__copy_text(refusal, sizeof refusal, m->info.refusal ? m->info.refusal : "no reason given");
  if (st == PARITY_STATUS_VERSION_MISMATCH) {
    snprintf(buf, n,
             "refused host ABI %u.%u: %s (plugin ABI %u.%u, host ABI %u.%u); "
             "remedy: rebuild the plugin against abi/parity_plugin.h %u.x",
             PARITY_ABI_MAJOR, PARITY_ABI_MINOR, refusal, p->abi_major, p->abi_minor, PARITY_ABI_MAJOR,
             PARITY_ABI_MINOR, PARITY_ABI_MAJOR);
    return buf;
  }
  if (st != PARITY_STATUS_OK) {
    snprintf(buf, n, "query failed: %s: %s (host ABI %u.%u)", psup_status_name(st), parity_last_error(),
             PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
    return buf;
  }
  if (m->info.abi_major != PARITY_ABI_MAJOR) {
    snprintf(buf, n,
             "speaks ABI %u.%u, host ABI is %u.%u; remedy: rebuild the plugin "
             "against abi/parity_plugin.h %u.x",
             p->abi_major, p->abi_minor, PARITY_ABI_MAJOR, PARITY_ABI_MINOR, PARITY_ABI_MAJOR);
    return buf;
  }
  if (!m->info.api || m->info.api->struct_size < API_REQUIRED_SIZE) {
    snprintf(buf, n,
             "function table %s (needs at least %zu bytes; plugin ABI %u.%u, "
             "host ABI %u.%u); remedy: fill parity_plugin_api_t up to supports()",
             m->info.api ? "too small" : "missing", (size_t)API_REQUIRED_SIZE, p->abi_major, p->abi_minor,
             PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
    return buf;
  }
  if (!m->info.name || !m->info.name[0] || !m->info.backend) {
    snprintf(buf, n, "answered without a name or backend (plugin ABI %u.%u, host ABI %u.%u)", p->abi_major,
             p->abi_minor, PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
    return buf;
  }
  size_t size = m->info.api->struct_size < sizeof m->api ? m->info.api->struct_size : sizeof m->api;
  memcpy(&m->api, m->info.api, size);
  m->api.struct_size = (uint32_t)size;
  const parity_plugin_api_t *a = &m->api;
  /* every required entry, named in the message when NULL */
  const struct {
    const void *fn;
    const char *name;
  } req[] = {{(const void *)a->init, "init"},
             {(const void *)a->shutdown, "shutdown"},
             {(const void *)a->get_device_count, "get_device_count"},
             {(const void *)a->get_device_info, "get_device_info"},
             {(const void *)a->device_open, "device_open"},
             {(const void *)a->device_close, "device_close"},
             {(const void *)a->buffer_alloc, "buffer_alloc"},
             {(const void *)a->buffer_free, "buffer_free"},
             {(const void *)a->buffer_write, "buffer_write"},
             {(const void *)a->buffer_read, "buffer_read"},
             {(const void *)a->buffer_copy, "buffer_copy"},
             {(const void *)a->buffer_fill, "buffer_fill"},
             {(const void *)a->synchronize, "synchronize"},
             {(const void *)a->supports, "supports"}};
  char missing[256] = "";
  for (size_t r = 0; r < sizeof req / sizeof req[0]; r++)
    if (!req[r].fn) {
      size_t len = strlen(missing);
      snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", req[r].name);
    }
  if (!missing[0]) return NULL;
  snprintf(buf, n, "function table has NULL required entries: %s (plugin ABI %u.%u, host ABI %u.%u)", missing,
           p->abi_major, p->abi_minor, PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
  return buf;
}

/* init() and the device count of a negotiated module; 0, or -1 with p's reason filled (the
 * plugin shut down again where init succeeded). */
static int module_init(parity_context_t *ctx, parity__plugin *p, parity__module *m) {
  parity__clear_error();
  int32_t st = m->api.init();
  if (st == PARITY_STATUS_OK) {
    st = m->api.get_device_count(&m->device_count);
    if (st != PARITY_STATUS_OK) m->api.shutdown();
  }
  if (st == PARITY_STATUS_OK && m->device_count > PARITY_MAX_DEVICES_PER_PLUGIN) {
    m->api.shutdown();
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED,
         "reported %u devices, more than the %d one plugin may "
         "have; the plugin is misbehaving",
         m->device_count, PARITY_MAX_DEVICES_PER_PLUGIN);
    return -1;
  }
  if (st == PARITY_STATUS_UNAVAILABLE) {
    skip(ctx, p, PARITY_PLUGIN_STATE_UNAVAILABLE, "unavailable: %s", parity_last_error());
    return -1;
  }
  if (st != PARITY_STATUS_OK) {
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED, "init failed: %s: %s", psup_status_name(st), parity_last_error());
    return -1;
  }
  return 0;
}

/* Load, negotiate and initialise the library at `real`; on failure fill p's reason. Caller holds
 * modules_lock. */
static parity__module *module_load(parity_context_t *ctx, parity__plugin *p, const char *real) {
  for (parity__module *m = modules; m; m = m->next)
    if (strcmp(m->realpath, real) == 0) {
      m->refs++;
      parity__log(ctx, 2, "reusing %s (already loaded by another context)", real);
      describe(p, m);
      return m;
    }
  /* NODELETE: a plugin's own dependencies (e.g. OpenMP worker threads) may outlive its
   * shutdown; the library stays mapped after dlclose, so nothing runs from unmapped code. */
  void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED,
         "dlopen failed: %s; remedy: make sure it is a parity plugin built for this machine, or "
         "remove it from the search path",
         dlerror());
    return NULL;
  }
  parity_plugin_query_fn query;
  *(void **)&query = dlsym(dl, PARITY_PLUGIN_ENTRY_NAME);
  if (!query) {
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED,
         "no entry symbol %s (not a parity plugin); remedy: export parity_plugin_query as "
         "docs/plugin-guide.md shows",
         PARITY_PLUGIN_ENTRY_NAME);
    dlclose(dl);
    return NULL;
  }
  parity__module *m = calloc(1, sizeof *m);
  char *path = strdup(real);
  if (!m || !path) {
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED, "out of memory loading the plugin");
    free(m), free(path);
    dlclose(dl);
    return NULL;
  }
  m->dl = dl;
  m->realpath = path;
  m->info.struct_size = sizeof m->info;
  parity__clear_error();
  int32_t st = query(PARITY_ABI_MAJOR, PARITY_ABI_MINOR, &parity__host_template, &m->info);
  describe(p, m);
  char buf[400];
  const char *why = negotiation_refusal(p, m, st, buf, sizeof buf);
  if (why) skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED, "%s", why);
  if (why || module_init(ctx, p, m) != 0) {
    free(m->realpath);
    free(m);
    dlclose(dl);
    return NULL;
  }
  m->refs = 1;
  m->next = modules;
  modules = m;
  return m;
}

static void module_release(parity__module *m) {
  pthread_mutex_lock(&modules_lock);
  if (--m->refs == 0) {
    for (parity__module **pp = &modules; *pp; pp = &(*pp)->next)
      if (*pp == m) {
        *pp = m->next;
        break;
      }
    m->api.shutdown();
    dlclose(m->dl);
    free(m->realpath);
    free(m);
  }
  pthread_mutex_unlock(&modules_lock);
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Load, negotiate and initialise the plugin recorded in p (its path), filling its state. */
static void load_now(parity_context_t *ctx, parity__plugin *p) {
  char real[PATH_MAX];
  if (!realpath(p->path, real)) snprintf(real, sizeof real, "%s", p->path);
  pthread_mutex_lock(&modules_lock);
  p->mod = module_load(ctx, p, real);
  pthread_mutex_unlock(&modules_lock);
  if (!p->mod) return;
  if (p->noted && (strcmp(p->noted_name, p->name) != 0 || strcmp(p->noted_backend, p->backend) != 0)) {
    module_release(p->mod);
    p->mod = NULL;
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED,
         "its identity note (section %s) says plugin '%s' (backend %s) "
         "but its query answered '%s' (backend %s); the plugin is misbehaving; remedy: give "
         "PARITY_PLUGIN_IDENTITY the names the query answers",
         PARITY_IDENTITY_SECTION, p->noted_name, p->noted_backend, p->name, p->backend);
    return;
  }
  for (parity__plugin *q = ctx->plugins; q < p; q++) {
    if ((q->state == PARITY_PLUGIN_STATE_LOADED || q->deferred) && strcmp(q->name, p->name) == 0) {
      module_release(p->mod);
      p->mod = NULL;
      skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED,
           "plugin name '%s' already provided by %s "
           "(earlier in the search order)",
           p->name, q->path);
      return;
    }
  }
  p->state = PARITY_PLUGIN_STATE_LOADED;
  p->device_count = p->mod->device_count;
  p->devices = calloc(p->device_count ? p->device_count : 1, sizeof *p->devices);
  if (!p->devices) {
    module_release(p->mod);
    p->mod = NULL;
    skip(ctx, p, PARITY_PLUGIN_STATE_SKIPPED, "out of host memory for %u device records", p->device_count);
    return;
  }
  parity__log(ctx, 2,
              "loaded %s: plugin '%s' (backend %s, version %s), plugin ABI %u.%u, host "
              "ABI %u.%u, %u device(s)",
              p->path, p->name, p->backend, p->version, p->abi_major, p->abi_minor, PARITY_ABI_MAJOR, PARITY_ABI_MINOR,
              p->device_count);
}

/* Only the plugin's identity (name, backend, version, ABI) from its query: 0 when it answered.
 * Nothing is initialised, so no driver or platform starts. */
static int identify_locked(parity__plugin *p, const char *real) {
  for (parity__module *m = modules; m; m = m->next)
    if (strcmp(m->realpath, real) == 0) { /* loaded by another context: no second query */
      describe(p, m);
      return 0;
    }
  parity_plugin_identity_t note;
  if (parity__identity_read(real, &note) == 0) { /* the file says who it is: nothing is loaded */
    set_identity(p, note.name, note.backend, note.version, note.abi_major, note.abi_minor);
    p->noted = 1;
    memcpy(p->noted_name, p->name, sizeof p->noted_name);
    memcpy(p->noted_backend, p->backend, sizeof p->noted_backend);
    return 0;
  }
  void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) return -1;
  parity_plugin_query_fn query;
  *(void **)&query = dlsym(dl, PARITY_PLUGIN_ENTRY_NAME);
  parity_plugin_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  int ok = query && query(PARITY_ABI_MAJOR, PARITY_ABI_MINOR, &parity__host_template, &info) == PARITY_STATUS_OK &&
           info.abi_major == PARITY_ABI_MAJOR && info.name && info.name[0] && info.backend;
  if (ok) { set_identity(p, info.name, info.backend, info.version, info.abi_major, info.abi_minor); }
  parity__clear_error();
  dlclose(dl);
  return ok ? 0 : -1;
}

/* Queries are serialised with loading (modules_lock): a plugin's query may write its globals. */
static int identify(parity__plugin *p, const char *real) {
  pthread_mutex_lock(&modules_lock);
  int rc = identify_locked(p, real);
  pthread_mutex_unlock(&modules_lock);
  return rc;
}

/* Plugins are initialised lazily: when the context asks for a named backend, a plugin whose name
 * and backend differ is only identified (no init, so selecting cpu never starts PoCL or a GPU
 * driver) and initialised the first time anything asks for it (parity__plugin_ensure). */
static void try_file(parity_context_t *ctx, const char *path) {
  char real[PATH_MAX];
  if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
  for (uint32_t i = 0; i < ctx->plugin_count; i++) {
    char other[PATH_MAX];
    if (realpath(ctx->plugins[i].path, other) && strcmp(other, real) == 0) return; /* same file */
  }
  if (ctx->plugin_count == PARITY_MAX_PLUGINS) {
    parity__note(ctx, "too many plugins; ignoring %s", path);
    return;
  }
  parity__plugin *p = &ctx->plugins[ctx->plugin_count++];
  memset(p, 0, sizeof *p);
  p->path = strdup(path);
  parity__log(ctx, 2, "trying %s", path);
  if (strcmp(ctx->backend, "auto") != 0 && identify(p, real) == 0 && strcmp(p->name, ctx->backend) != 0 &&
      strcmp(p->backend, ctx->backend) != 0) {
    p->deferred = 1;
    parity__log(ctx, 2, "found %s: plugin '%s' (backend %s); initialised only when used", path, p->name, p->backend);
    return;
  }
  load_now(ctx, p);
}

int parity__plugin_ensure(parity_context_t *ctx, uint32_t index) {
  if (index >= ctx->plugin_count) return 0;
  parity__plugin *p = &ctx->plugins[index];
  if (p->deferred) {
    p->deferred = 0;
    load_now(ctx, p);
  }
  return p->state == PARITY_PLUGIN_STATE_LOADED;
}

static void scan_dir(parity_context_t *ctx, const char *dir, int explicit) {
  DIR *d = opendir(dir);
  if (!d) {
    if (explicit)
      parity__note(ctx,
                   "PARITY_PLUGIN_PATH: folder '%s' does not exist or cannot be read; "
                   "remedy: fix the path or unset PARITY_PLUGIN_PATH",
                   dir);
    else
      parity__log(ctx, 2, "no plugin folder at %s", dir);
    return;
  }
  parity__log(ctx, 2, "searching %s", dir);
  char *names[256];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > strlen(PREFIX) + strlen(SUFFIX) && strncmp(e->d_name, PREFIX, strlen(PREFIX)) == 0 &&
        strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX) == 0)
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, name_cmp);
  for (size_t i = 0; i < n; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    try_file(ctx, path);
    free(names[i]);
  }
}

/* The folder libparity was loaded from (resolved), from the address of one of its functions. */
int parity__library_dir(char *out, size_t n) {
  Dl_info info;
  char real[PATH_MAX];
  if (!dladdr((void *)&parity__library_dir, &info) || !info.dli_fname || !realpath(info.dli_fname, real)) return -1;
  char *slash = strrchr(real, '/');
  if (!slash) return -1;
  *slash = 0;
  snprintf(out, n, "%s", real);
  return 0;
}

/* OpenMP's idle worker threads (libgomp, which the CPU plugin uses) spin for 300,000 iterations —
 * a millisecond or more — after every parallel region before they sleep, taking a core from
 * whatever else has work. Unless the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT set), parity
 * lets them spin only briefly: GOMP_SPINCOUNT=300 is set before the first plugin, and with it
 * libgomp, loads. A region then usually wakes a sleeping team (20-100 us on the 2-core VM), and
 * the CPU plugin weighs every split against that measured cost (plugins/cpu/cpu_parallel.h), so
 * small ops stay on one thread. parity-train's MLP epoch there (images/s): with a busy loop pinned
 * to the other core about 65,000, as with OMP_WAIT_POLICY=passive (libgomp's default spin: 20,000);
 * idle 65,000-71,000, as with libgomp's default (docs/cpu-kernels.md, "Threads"). A process that
 * loaded libgomp before (its own OpenMP) keeps its setting. */
#define PARITY_GOMP_SPINCOUNT "300"
static void quiet_openmp(void) {
  if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", PARITY_GOMP_SPINCOUNT, 0);
}

void parity__load_plugins(parity_context_t *ctx, const char *plugin_path, int search_default_dirs) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, quiet_openmp);
  if (plugin_path && *plugin_path) {
    char *copy = strdup(plugin_path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) scan_dir(ctx, dir, 1);
    free(copy);
  }
  if (search_default_dirs) {
    char own[PATH_MAX], dir[PATH_MAX + 8];
    if (parity__library_dir(own, sizeof own) != 0) {
      parity__log(ctx, 1, "cannot tell where libparity is (dladdr); only PARITY_PLUGIN_PATH is searched");
      return;
    }
    struct stat st;
    snprintf(dir, sizeof dir, "%s/parity", own);
    if (stat(dir, &st) == 0)
      scan_dir(ctx, dir, 0);
    else
      parity__log(ctx, 2, "no plugin folder at %s", dir);
    char build[PATH_MAX];
    if (PARITY_BUILD_PLUGIN_DIR[0] && realpath(PARITY_BUILD_PLUGIN_DIR, build) && strcmp(build, own) == 0)
      scan_dir(ctx, own, 0); /* the build tree: plugins sit beside libparity */
  }
}

void parity__unload_plugins(parity_context_t *ctx) {
  for (uint32_t i = 0; i < ctx->plugin_count; i++) {
    parity__plugin *p = &ctx->plugins[i];
    for (uint32_t d = 0; p->devices && d < p->device_count; d++)
      if (p->devices[d]) parity__device_close(p->devices[d]);
    free(p->devices);
    if (p->mod) module_release(p->mod);
    free(p->path);
  }
  ctx->plugin_count = 0;
}
