/* fake_plugin.c — deliberately odd plugins for the loader tests, one source compiled once per
 * FAKE_MODE. Buffers live in host memory; the only kernel is f32 neg (elementwise forward).
 *
 *   NORMAL       a well-behaved plugin named FAKE_NAME
 *   REFUSE       refuses every host major version (as a 2.x plugin would)
 *   OLDER        built against a smaller table and device info (no softmax entries, no
 *                denormal field): must load and work, softmax unsupported
 *   NEWER        speaks ABI 1.1 with a larger table and device info: must load and work
 *   DEVFAIL      loads, but device_open fails
 *   UNAVAILABLE  init says the backend cannot run here
 *   NOSYM        exports no entry symbol at all
 *   NULLFN       leaves two required entries (buffer_fill, supports) NULL
 * Hostile ones (built into their own folder; every value they return is untrusted input):
 *   MANYDEV      reports 2^32-1 devices
 *   DEV2G        reports 2^31 devices
 *   ERRNONUL     init fails with an error text that has no NUL before a guard page: 100 bytes given
 *                with their length (report_error_n, ABI 1.2), or 2000 through report_error
 *   NAMENONUL    a device name, driver and math text filling their arrays with no NUL
 *   QUERYNONUL   plugin name, backend and version with no NUL before a guard page, and a
 *                query-time report_error with no NUL
 *   NULLHANDLE   buffer_alloc says OK but returns no handle
 *   BADHANDLE    device_open says OK but returns no handle
 *   INITCRASH    crashes in init (SIGSEGV): only a plugin that is never initialised is harmless
 *   NOTELIE      its identity note (abi/parity_plugin.h) says it is the cpu plugin; its query
 *                answers FAKE_NAME: the host must skip it, naming both */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "parity_plugin.h"

#define MODE_NORMAL 0
#define MODE_REFUSE 1
#define MODE_OLDER 2
#define MODE_NEWER 3
#define MODE_DEVFAIL 4
#define MODE_UNAVAILABLE 5
#define MODE_NOSYM 6
#define MODE_NULLFN 7
#define MODE_MANYDEV 8
#define MODE_DEV2G 9
#define MODE_ERRNONUL 10
#define MODE_NAMENONUL 11
#define MODE_QUERYNONUL 12
#define MODE_NULLHANDLE 13
#define MODE_BADHANDLE 14
#define MODE_INITCRASH 15
#define MODE_NOTELIE 16

static const parity_host_api_t *host;

static int32_t fail(int32_t st, const char *msg) {
  if (host && host->report_error) host->report_error(host->host_data, st, msg);
  return st;
}

struct parity_plugin_buffer_t {
  uint64_t size;
  unsigned char *data;
};
struct parity_plugin_device_t {
  int unused;
};
static struct parity_plugin_device_t dev0;

/* `len` bytes of `c` with no NUL, ending exactly at a page that cannot be read: reading one
 * byte past them faults. */
static const char *unterminated(char c, size_t len) {
  long page = sysconf(_SC_PAGESIZE);
  char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return "mmap failed";
  mprotect(mem + page, (size_t)page, PROT_NONE);
  memset(mem + page - len, c, len);
  return mem + page - len;
}

static int32_t f_init(void) {
  if (FAKE_MODE == MODE_INITCRASH) { /* a real SIGSEGV (a NULL load is UB that UBSan turns into an exit) */
    raise(SIGSEGV);
    return PARITY_STATUS_INTERNAL;
  }
  if (FAKE_MODE == MODE_ERRNONUL) { /* 100 bytes then a guard page: only the stated length keeps the host safe */
    if (host && PARITY_HAS_FIELD(host, parity_host_api_t, report_error_n) && host->report_error_n) {
      host->report_error_n(host->host_data, PARITY_STATUS_DEVICE_ERROR, unterminated('E', 100), 100);
      return PARITY_STATUS_DEVICE_ERROR;
    }
    return fail(PARITY_STATUS_DEVICE_ERROR, unterminated('E', 2000));
  }
  return FAKE_MODE == MODE_UNAVAILABLE ? fail(PARITY_STATUS_UNAVAILABLE, "no fake driver on this machine")
                                       : PARITY_STATUS_OK;
}
/* FAKE_BACKEND and FAKE_TYPE: the backend kind and device type it claims (defaults: its name, OTHER) */
#ifndef FAKE_BACKEND
#define FAKE_BACKEND FAKE_NAME
#endif
#ifndef FAKE_TYPE
#define FAKE_TYPE PARITY_DEVICE_TYPE_OTHER
#endif

static void f_shutdown(void) {}
static int32_t f_count(uint32_t *n) {
  *n = FAKE_MODE == MODE_MANYDEV ? UINT32_MAX : FAKE_MODE == MODE_DEV2G ? 1u << 31 : 1;
  return PARITY_STATUS_OK;
}

/* A newer plugin's device info: the 1.0 struct plus a field appended in "1.1". */
typedef struct {
  parity_device_info_t base;
  uint64_t future_field;
} info_v1_1;

static int32_t f_info(uint32_t index, parity_device_info_t *out) {
  if (index != 0) return fail(PARITY_STATUS_OUT_OF_RANGE, "fake: one device only");
  info_v1_1 full;
  memset(&full, 0, sizeof full);
  full.base.type = FAKE_TYPE;
  strcpy(full.base.name, "fake device " FAKE_NAME);
  if (FAKE_MODE == MODE_NAMENONUL) {
    memset(full.base.name, 'N', sizeof full.base.name);
    memset(full.base.driver, 'D', sizeof full.base.driver);
    memset(full.base.math, 'M', sizeof full.base.math);
  }
  full.base.memory_bytes = 1u << 20;
  full.base.max_buffer_bytes = 1u << 20;
  full.base.dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32);
  full.base.denormals = PARITY_DENORMALS_PRESERVED;
  if (FAKE_MODE == MODE_NEWER) full.base.flags = PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS; /* its neg: by dtype */
  full.future_field = 0x5555555555555555ull;
  uint32_t mine = FAKE_MODE == MODE_OLDER   ? (uint32_t)offsetof(parity_device_info_t, denormals)
                  : FAKE_MODE == MODE_NEWER ? (uint32_t)sizeof(info_v1_1)
                                            : (uint32_t)sizeof(parity_device_info_t);
  uint32_t n = out->struct_size < mine ? out->struct_size : mine; /* never past the host's size */
  full.base.struct_size = n;
  memcpy(out, &full, n);
  return PARITY_STATUS_OK;
}

static int32_t f_open(uint32_t index, parity_plugin_device_t **out) {
  (void)index;
  if (FAKE_MODE == MODE_DEVFAIL) return fail(PARITY_STATUS_DEVICE_ERROR, "fake device is wedged (simulated)");
  *out = FAKE_MODE == MODE_BADHANDLE ? NULL : &dev0;
  return PARITY_STATUS_OK;
}
static void f_close(parity_plugin_device_t *d) { (void)d; }

static void f_free(parity_plugin_device_t *d, parity_plugin_buffer_t *b) {
  (void)d;
  if (b) free(b->data);
  free(b);
}
static int32_t f_alloc(parity_plugin_device_t *d, uint64_t size, parity_plugin_buffer_t **out) {
  (void)d;
  parity_plugin_buffer_t *b = calloc(1, sizeof *b);
  if (b) b->data = calloc(1, size ? size : 1);
  if (!b || !b->data) {
    free(b);
    return fail(PARITY_STATUS_OUT_OF_MEMORY, "fake: out of memory");
  }
  b->size = size;
  *out = b;
  if (FAKE_MODE == MODE_NULLHANDLE) {
    f_free(d, b);
    *out = NULL;
  }
  return PARITY_STATUS_OK;
}
static int32_t f_write(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                       uint64_t n) {
  (void)d;
  memcpy(b->data + off, src, n);
  return PARITY_STATUS_OK;
}
static int32_t f_read(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t n) {
  (void)d;
  memcpy(dst, b->data + off, n);
  return PARITY_STATUS_OK;
}
static int32_t f_copy(parity_plugin_device_t *d, parity_plugin_buffer_t *s, uint64_t so, parity_plugin_buffer_t *t,
                      uint64_t to, uint64_t n) {
  (void)d;
  memmove(t->data + to, s->data + so, n);
  return PARITY_STATUS_OK;
}
static int32_t f_fill(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, uint64_t n, const void *pat,
                      uint32_t ps) {
  (void)d;
  for (uint64_t i = 0; i < n; i += ps) memcpy(b->data + off + i, pat, ps);
  return PARITY_STATUS_OK;
}
static int32_t f_sync(parity_plugin_device_t *d) {
  (void)d;
  return PARITY_STATUS_OK;
}

static int is_contiguous_f32(const parity_tensor_desc_t *t) {
  int64_t expect = 1;
  for (int i = (int)t->rank - 1; i >= 0; i--) {
    if (t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return t->dtype == PARITY_DTYPE_F32;
}

/* How often the host called supports() and the kernel entry: the plan tests read them
 * (dlsym of fake_call_counts) to check that replay calls the entry directly. */
static uint64_t supports_calls, entry_calls;
__attribute__((visibility("default"))) void fake_call_counts(uint64_t *supports, uint64_t *entries) {
  *supports = supports_calls;
  *entries = entry_calls;
}

static int32_t accepts(const parity_op_desc_t *desc) {
  if (desc->op == PARITY_OP_NEG && desc->direction == PARITY_DIRECTION_FORWARD && is_contiguous_f32(desc->inputs[0]) &&
      is_contiguous_f32(desc->outputs[0]))
    return PARITY_STATUS_OK;
  return fail(PARITY_STATUS_UNSUPPORTED, "fake plugin runs contiguous f32 neg only");
}

static int32_t f_supports(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  (void)d;
  supports_calls++;
  return accepts(desc);
}

static int32_t f_neg(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  (void)d;
  entry_calls++;
  int32_t st = accepts(desc);
  if (st != PARITY_STATUS_OK) return st;
  const parity_tensor_desc_t *x = desc->inputs[0], *y = desc->outputs[0];
  int64_t n = 1;
  for (uint32_t i = 0; i < x->rank; i++) n *= x->shape[i];
  const float *src = (const float *)(x->buffer->data + x->offset_bytes);
  float *dst = (float *)(y->buffer->data + y->offset_bytes);
  for (int64_t i = 0; i < n; i++) dst[i] = -src[i];
  return PARITY_STATUS_OK;
}

static int32_t f_future(void) { return PARITY_STATUS_OK; }

/* The NEWER plugin offers the ABI 1.1 plan entries. fake_plan_mode picks how they behave, so
 * the plan tests can show the host's rules failing on a plugin that breaks them:
 *   0 prepares (a copy of each neg descriptor) and runs the copies,
 *   1 declines (UNSUPPORTED), 2 says OK but returns no plan, 3 prepares but every run fails. */
struct parity_plugin_plan_t {
  uint32_t count;
  parity_op_desc_t desc[16];
  parity_tensor_desc_t t[16][2];
};
static int plan_mode;
static uint64_t plan_prepares, plan_runs, plan_releases;
__attribute__((visibility("default"))) void fake_plan_mode(int mode) { plan_mode = mode; }
__attribute__((visibility("default"))) void fake_plan_counts(uint64_t *prepares, uint64_t *runs, uint64_t *releases) {
  *prepares = plan_prepares, *runs = plan_runs, *releases = plan_releases;
}

static int32_t f_plan_prepare(parity_plugin_device_t *d, const parity_plan_command_t *cmds, uint32_t count,
                              parity_plugin_plan_t **out) {
  (void)d;
  plan_prepares++;
  if (plan_mode == 1) return fail(PARITY_STATUS_UNSUPPORTED, "fake: declines to prepare plans (simulated)");
  if (plan_mode == 2) return PARITY_STATUS_OK; /* *out left NULL: a broken plugin */
  parity_plugin_plan_t *p = calloc(1, sizeof *p);
  if (!p || count > 16) {
    free(p);
    return fail(PARITY_STATUS_UNSUPPORTED, "fake: plans of up to 16 kernels only");
  }
  for (uint32_t i = 0; i < count; i++) {
    if (cmds[i].kind != PARITY_PLAN_COMMAND_KERNEL) {
      free(p);
      return fail(PARITY_STATUS_UNSUPPORTED, "fake: kernels only");
    }
    p->desc[i] = *cmds[i].op;
    p->t[i][0] = *cmds[i].op->inputs[0], p->t[i][1] = *cmds[i].op->outputs[0];
    p->desc[i].inputs[0] = &p->t[i][0], p->desc[i].outputs[0] = &p->t[i][1];
  }
  p->count = count;
  *out = p;
  return PARITY_STATUS_OK;
}

static int32_t f_neg(parity_plugin_device_t *d, const parity_op_desc_t *desc);
static int32_t f_plan_run(parity_plugin_device_t *d, parity_plugin_plan_t *p) {
  plan_runs++;
  if (plan_mode == 3) return fail(PARITY_STATUS_DEVICE_ERROR, "fake: the prepared plan hit a device fault (simulated)");
  for (uint32_t i = 0; i < p->count; i++) {
    int32_t st = f_neg(d, &p->desc[i]);
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

static void f_plan_release(parity_plugin_device_t *d, parity_plugin_plan_t *p) {
  (void)d;
  plan_releases++;
  free(p);
}

/* The newer plugin's table: 1.0's entries plus one appended in "1.1". */
typedef struct {
  parity_plugin_api_t base;
  int32_t (*future_entry)(void);
} api_v1_1;

static const api_v1_1 table = {
    .base =
        {
            .struct_size = FAKE_MODE == MODE_OLDER   ? (uint32_t)offsetof(parity_plugin_api_t, softmax_forward)
                           : FAKE_MODE == MODE_NEWER ? (uint32_t)sizeof(api_v1_1)
                                                     : (uint32_t)sizeof(parity_plugin_api_t),
            .init = f_init,
            .shutdown = f_shutdown,
            .get_device_count = f_count,
            .get_device_info = f_info,
            .device_open = f_open,
            .device_close = f_close,
            .buffer_alloc = f_alloc,
            .buffer_free = f_free,
            .buffer_write = f_write,
            .buffer_read = f_read,
            .buffer_copy = f_copy,
            .buffer_fill = FAKE_MODE == MODE_NULLFN ? NULL : f_fill,
            .synchronize = f_sync,
            .supports = FAKE_MODE == MODE_NULLFN ? NULL : f_supports,
            .elementwise_forward = f_neg,
            /* present in the struct, but outside an OLDER plugin's struct_size: must never be used */
            .softmax_forward = f_neg,
            .plan_prepare = FAKE_MODE == MODE_NEWER ? f_plan_prepare : NULL,
            .plan_run = FAKE_MODE == MODE_NEWER ? f_plan_run : NULL,
            .plan_release = FAKE_MODE == MODE_NEWER ? f_plan_release : NULL,
        },
    .future_entry = f_future,
};

#if FAKE_MODE == MODE_NOTELIE
PARITY_PLUGIN_IDENTITY(fake_identity, "cpu", "cpu", "test");
#else
PARITY_PLUGIN_IDENTITY(fake_identity, FAKE_NAME, FAKE_BACKEND, "test");
#endif

#if FAKE_MODE != MODE_NOSYM
PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor, const parity_host_api_t *h,
                                                 parity_plugin_info_t *out) {
  (void)host_minor;
  out->name = FAKE_NAME;
  out->backend = FAKE_BACKEND;
  out->version = "test";
  out->abi_major = FAKE_MODE == MODE_REFUSE ? 2 : PARITY_ABI_MAJOR;
  out->abi_minor = FAKE_MODE == MODE_NEWER ? PARITY_ABI_MINOR + 1 : FAKE_MODE == MODE_REFUSE ? 0 : PARITY_ABI_MINOR;
  if (FAKE_MODE == MODE_REFUSE || host_major != PARITY_ABI_MAJOR) {
    out->refusal = "this plugin needs a host speaking ABI 2.x";
    return PARITY_STATUS_VERSION_MISMATCH;
  }
  host = h;
  out->api = &table.base;
  if (FAKE_MODE == MODE_QUERYNONUL) {
    out->name = unterminated('Q', 300);
    out->backend = unterminated('B', 100);
    out->version = unterminated('V', 100);
    h->report_error(h->host_data, PARITY_STATUS_INTERNAL, unterminated('R', 3000));
  }
  return PARITY_STATUS_OK;
}
#else
PARITY_PLUGIN_EXPORT int fake_plugin_without_entry(void) { return (int)sizeof(table); }
#endif
