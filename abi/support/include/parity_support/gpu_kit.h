/* gpu_kit.h — the host kit for plugins whose devices have queues and buffers (the OpenCL, Vulkan
 * and CUDA plugins, examples/plugin-template-gpu). What every such plugin writes the same way is
 * written here once:
 *   - messages: one formatter that puts the backend's prefix ("opencl: ") in front of every
 *     message, and the driver-error form "<call>: <code name> (<what>)";
 *   - device slots: the table filled at init, the device count, the info record copied by the
 *     caller's struct_size, the capability record the operand contract checks against;
 *   - dispatch: supports() (element-aligned offsets, the operand contract, then the plugin's own
 *     device limits per family) and the ten kernel entries (the cheap entry check, then the
 *     family's forward or backward), driven by one table per family;
 *   - buffer arguments: range and fill-pattern checks before the plugin's transfer functions.
 * A plugin fills one psup_kit_t, expands PSUP_KIT_ENTRIES(kit) once and puts PSUP_KIT_API_FIELDS
 * into its parity_plugin_api_t. What differs stays in the plugin: the driver calls, program or
 * pipeline management, the launch geometry and its kernels (docs/plugin-guide.md, "GPU host kit"). */
#ifndef PARITY_SUPPORT_GPU_KIT_H
#define PARITY_SUPPORT_GPU_KIT_H

#include <stddef.h>
#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/contract.h"
#include "parity_support/negotiate.h"

/* The part of a device slot the kit reads: a plugin's slot struct begins with it. */
typedef struct psup_kit_slot_t {
  parity_device_info_t info;
  psup_caps_t caps; /* caps.backend and caps.device are set by psup_kit_slot_ready */
} psup_kit_slot_t;

typedef int32_t (*psup_kit_op_fn)(parity_plugin_device_t *dev, const parity_op_desc_t *d);

/* One kernel family: its entries, and the device limits it adds to the operand contract. */
typedef struct psup_kit_family_t {
  psup_kit_op_fn forward, backward; /* NULL: the family is not implemented (UNSUPPORTED) */
  psup_kit_op_fn supports;          /* NULL: the contract and alignment are enough */
} psup_kit_family_t;

/* The plugin's transfer functions, called after the kit checked their arguments (a range
 * inside the buffer; a fill pattern of 1, 2, 4 or 8 bytes that divides the size). */
typedef struct psup_kit_buffers_t {
  uint64_t (*size)(const parity_plugin_buffer_t *b);
  int32_t (*write)(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                   uint64_t size);
  int32_t (*read)(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t size);
  int32_t (*copy)(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,
                  parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size);
  int32_t (*fill)(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                  const void *pattern, uint32_t psize);
} psup_kit_buffers_t;

#define PSUP_KIT_FAMILY_SLOTS 6 /* indexed by parity_family_t (1..5) */

/* Optional: prepared plans (the ABI 1.1 plan entries). The kit prepares a plan by issuing its
 * commands through the same entries as eager execution (psup_kit_launch, psup_kit_buffer_fill)
 * between begin and end, while the plugin records instead of enqueueing: every launch and fill
 * (and any scratch memory they take) from begin on goes into the recording, which end turns into
 * the plugin's replayable form (an OpenCL launch list, Vulkan command buffers, a CUDA graph). A
 * replay therefore issues exactly what eager execution issued, with the same arguments: the same
 * bits. */
typedef struct psup_kit_plans_t {
  int32_t (*begin)(parity_plugin_device_t *dev); /* start recording on dev */
  /* stop recording; ok 0: a command failed, discard the recording (*out untouched); else build
   * the plan into *out */
  int32_t (*end)(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out);
  int32_t (*run)(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
  void (*release)(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
} psup_kit_plans_t;

typedef struct psup_kit_t {
  const char *backend;           /* "opencl": every message's prefix */
  const parity_host_api_t *host; /* set by psup_kit_set_host at query */
  /* device slots in the plugin's storage: max_slots of slot_size bytes, each beginning with a
   * psup_kit_slot_t; slot_count filled at init */
  void *slots;
  size_t slot_size;
  uint32_t max_slots, slot_count;
  /* the slot a device was opened on */
  const psup_kit_slot_t *(*slot_of)(const parity_plugin_device_t *dev);
  /* device_open: a zeroed device of device_size bytes for an existing slot, filled by
   * device_init; when that fails, device_close releases what it made */
  size_t device_size;
  int32_t (*device_init)(parity_plugin_device_t *dev, uint32_t index);
  void (*device_close)(parity_plugin_device_t *dev);
  /* optional: checks before the families' own (a device limit every family shares) */
  psup_kit_op_fn check;
  /* optional: called before each kernel entry and transfer (CUDA: refuse a poisoned context,
   * make the device's context current) */
  int32_t (*enter)(parity_plugin_device_t *dev);
  psup_kit_family_t family[PSUP_KIT_FAMILY_SLOTS];
  psup_kit_buffers_t buffers;
  psup_kit_plans_t plans; /* all NULL: the plugin uses PSUP_KIT_API (no plan entries) */
} psup_kit_t;

/* ---- messages ------------------------------------------------------------------------------ */
void psup_kit_set_host(psup_kit_t *k, const parity_host_api_t *host);
/* "<backend>: <fmt...>" reported to the host; returns status. */
int32_t psup_kit_fail(const psup_kit_t *k, int32_t status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "<backend>: <fmt...>" logged at level. */
void psup_kit_log(const psup_kit_t *k, int32_t level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A driver call that failed: "<backend>: <call>: <name> (<what>)", name NULL giving "unknown
 * <api> error <code>" (api: "OpenCL", "VkResult", ...); status OK is turned into INTERNAL. */
int32_t psup_kit_driver_fail(const psup_kit_t *k, int32_t status, const char *call, const char *name, const char *api,
                             long long code, const char *what);

/* ---- device slots ---------------------------------------------------------------------------- */
/* Empty the table (init and shutdown). */
void psup_kit_slots_reset(psup_kit_t *k);
/* The next slot, zeroed, or NULL (logged as a warning naming `name`) when the table is full. */
void *psup_kit_slot_add(psup_kit_t *k, const char *name);
/* Slot `index`, NULL past the count. */
void *psup_kit_slot_at(const psup_kit_t *k, uint32_t index);
/* The ABI's device_open: OUT_OF_RANGE ("device <i> does not exist") for a slot that does not exist,
 * OUT_OF_MEMORY, or device_init's status (after device_close); else *out. */
int32_t psup_kit_device_open(const psup_kit_t *k, uint32_t index, parity_plugin_device_t **out);
/* Set the info record's struct_size and the capability record from it (backend, device name,
 * dtype mask): after a slot's info is filled in. */
void psup_kit_slot_ready(const psup_kit_t *k, psup_kit_slot_t *s);
/* The ABI's get_device_count and get_device_info (copied up to out->struct_size bytes). */
int32_t psup_kit_device_count(const psup_kit_t *k, uint32_t *out);
int32_t psup_kit_device_info(const psup_kit_t *k, uint32_t index, parity_device_info_t *out);

/* ---- dispatch ------------------------------------------------------------------------------- */
/* OK when every present operand's byte offset is a multiple of its element size (the kernels
 * address elements); else UNSUPPORTED, reported. */
int32_t psup_kit_check_alignment(const psup_kit_t *k, const parity_op_desc_t *d);
/* The ABI's supports(): alignment, the operand contract on the slot's caps, k->check, then the
 * family's supports. */
int32_t psup_kit_supports(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_op_desc_t *d);
/* A kernel entry: the entry check (psup_check_kernel_entry), k->enter, then the family's
 * forward or backward. */
int32_t psup_kit_launch(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_op_desc_t *d, int32_t family,
                        int32_t direction);

/* ---- buffers ------------------------------------------------------------------------------ */
/* OUT_OF_MEMORY, "cannot allocate <size> bytes: larger than <limit> (<max> bytes) of <device>",
 * when size passes the slot's max_buffer_bytes; `limit` names the driver's limit. */
int32_t psup_kit_check_alloc(const psup_kit_t *k, const psup_kit_slot_t *s, uint64_t size, const char *limit);
int32_t psup_kit_buffer_write(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                              const void *src, uint64_t size);
int32_t psup_kit_buffer_read(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                             void *dst, uint64_t size);
int32_t psup_kit_buffer_copy(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *src,
                             uint64_t src_off, parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size);
int32_t psup_kit_buffer_fill(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                             uint64_t size, const void *pattern, uint32_t psize);

/* ---- scratch memory ------------------------------------------------------------------------- */
/* Scratch memory (the reductions' partials and tie counts, an overlapping copy's bounce buffer):
 * a device, and a plan being recorded, keeps one buffer and replaces it by a larger one when a
 * request does not fit. The rule every GPU plugin follows, with its knob PARITY_<BACKEND>_SCRATCH:
 *   rounded (default)  a buffer serves any request up to its size; a new one is the request
 *                      rounded up to 64 KiB (few reallocations), or the request itself where that
 *                      would pass the device's largest buffer;
 *   exact              a buffer serves only a request of exactly its size, and a new one is exactly
 *                      the request: the allocation ends where the op's own sizing says its scratch
 *                      ends. The checking runs use it (tests/cuda/check, tests/opencl/check, the Vulkan
 *                      GPU-assisted validation run): a partial plan sized short then writes past
 *                      its allocation, which rounding would hide until a device with more threads
 *                      (more partials) needs more than 64 KiB. */
typedef enum { PSUP_SCRATCH_ROUNDED = 0, PSUP_SCRATCH_EXACT = 1 } psup_scratch_mode_t;
/* Read PARITY_<BACKEND>_SCRATCH (k->backend in capitals): 0 and *mode, or -1 with the message in
 * err (the variable, the value as written, what is accepted). */
int psup_kit_scratch_mode(const psup_kit_t *k, int *mode, char *err, size_t n);
/* Whether a scratch buffer of `have` bytes (0: none) serves a request of `want` bytes. */
int psup_kit_scratch_fits(int mode, uint64_t have, uint64_t want);
/* The size of a new scratch buffer for `want` bytes on a device whose largest buffer is
 * max_bytes. */
uint64_t psup_kit_scratch_size(int mode, uint64_t want, uint64_t max_bytes);

/* ---- prepared plans ------------------------------------------------------------------------- */
/* The ABI's plan_prepare: k->plans.begin, each command through its entry (a KERNEL through
 * psup_kit_launch, a FILL through psup_kit_buffer_fill), then k->plans.end. A command that fails
 * ends the recording with ok 0 and returns its status and message (a family that cannot record
 * a launch returns UNSUPPORTED: the host then replays the plan eagerly). UNSUPPORTED when the
 * plugin has no plans. */
int32_t psup_kit_plan_prepare(const psup_kit_t *k, parity_plugin_device_t *dev, const parity_plan_command_t *cmds,
                              uint32_t count, parity_plugin_plan_t **out);
/* The ABI's plan_run (k->enter, then k->plans.run) and plan_release. */
int32_t psup_kit_plan_run(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
void psup_kit_plan_release(const psup_kit_t *k, parity_plugin_device_t *dev, parity_plugin_plan_t *plan);

/* A driver call's result: return fail (an expression that may use r_, the result) unless it is ok. */
#define PSUP_KIT_CHECK(type, expr, ok, fail) \
  do {                                       \
    type r_ = (expr);                        \
    if (r_ != (ok)) return (fail);           \
  } while (0)

/* The plugin's own entries the kit does not write, declared for prefix_ (cl_internal.h ...). */
#define PSUP_KIT_DECLARE_PLUGIN(prefix)                                                                                \
  int32_t prefix##_device_init(parity_plugin_device_t *dev, uint32_t index);                                           \
  void prefix##_device_close(parity_plugin_device_t *dev);                                                             \
  int32_t prefix##_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out);             \
  void prefix##_buffer_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b);                                   \
  int32_t prefix##_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src, \
                                uint64_t size);                                                                        \
  int32_t prefix##_buffer_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,        \
                               uint64_t size);                                                                         \
  int32_t prefix##_buffer_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,             \
                               parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size);                          \
  int32_t prefix##_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,    \
                               const void *pattern, uint32_t psize);                                                   \
  int32_t prefix##_synchronize(parity_plugin_device_t *dev);                                                           \
  const parity_plugin_api_t *prefix##_plugin_api(void)
/* psup_kit_t's device fields for a plugin whose functions are named prefix_device_init/_close. */
#define PSUP_KIT_DEVICES(prefix)                                                      \
  .device_size = sizeof(parity_plugin_device_t), .device_init = prefix##_device_init, \
  .device_close = prefix##_device_close
/* psup_kit_t's slot fields for a static array of slots. */
#define PSUP_KIT_SLOTS(array) \
  .slots = (array), .slot_size = sizeof(array)[0], .max_slots = (uint32_t)(sizeof(array) / sizeof(array)[0])
/* psup_kit_t's family table for all five families, functions named prefix_<family>_forward and
 * _backward, with each family's supports (NULL: the contract is enough). */
#define PSUP_KIT_FAMILIES(prefix, ew, red, mm, conv, smx)                                                         \
  .family = {PSUP_KIT_FAMILY(ELEMENTWISE, prefix, elementwise, ew), PSUP_KIT_FAMILY(REDUCE, prefix, reduce, red), \
             PSUP_KIT_FAMILY(MATMUL, prefix, matmul, mm), PSUP_KIT_FAMILY(CONV2D, prefix, conv2d, conv),          \
             PSUP_KIT_FAMILY(SOFTMAX, prefix, softmax, smx)}
/* The five families' forward and backward entries, named prefix_<family>_forward/_backward. */
#define PSUP_KIT_DECLARE_FAMILY_(prefix, name)                                               \
  int32_t prefix##_##name##_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d); \
  int32_t prefix##_##name##_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d)
#define PSUP_KIT_DECLARE_FAMILIES(prefix)        \
  PSUP_KIT_DECLARE_FAMILY_(prefix, elementwise); \
  PSUP_KIT_DECLARE_FAMILY_(prefix, reduce);      \
  PSUP_KIT_DECLARE_FAMILY_(prefix, matmul);      \
  PSUP_KIT_DECLARE_FAMILY_(prefix, conv2d);      \
  PSUP_KIT_DECLARE_FAMILY_(prefix, softmax)
/* A family's row of psup_kit_t.family for functions named prefix_name_forward/_backward. */
#define PSUP_KIT_FAMILY(FAMILY, prefix, name, supports) \
  [PARITY_FAMILY_##FAMILY] = {prefix##_##name##_forward, prefix##_##name##_backward, supports}
/* The transfer table for functions named prefix_buffer_write/read/copy/fill. */
#define PSUP_KIT_TRANSFERS(prefix, size) \
  { size, prefix##_buffer_write, prefix##_buffer_read, prefix##_buffer_copy, prefix##_buffer_fill }

/* ---- the ABI entries of one plugin ----------------------------------------------------------- */
/* Expanded once in a plugin's table file, after its psup_kit_t `kit` is declared: static
 * functions with the ABI's signatures that call the kit with &kit. */
#define PSUP_KIT_ENTRY_(kit, name, FAMILY, dir, DIR)                                               \
  static int32_t psup_kit_##name##_##dir(parity_plugin_device_t *dev, const parity_op_desc_t *d) { \
    return psup_kit_launch(&(kit), dev, d, PARITY_FAMILY_##FAMILY, PARITY_DIRECTION_##DIR);        \
  }
// clang-format off
#define PSUP_KIT_FAMILY_(kit, name, FAMILY)                                                                \
  PSUP_KIT_ENTRY_(kit, name, FAMILY, forward, FORWARD) PSUP_KIT_ENTRY_(kit, name, FAMILY, backward, BACKWARD)
// clang-format on
#define PSUP_KIT_ENTRIES(kit)                                                                                        \
  static int32_t psup_kit_count_(uint32_t *out) { return psup_kit_device_count(&(kit), out); }                       \
  static int32_t psup_kit_info_(uint32_t i, parity_device_info_t *out) {                                             \
    return psup_kit_device_info(&(kit), i, out);                                                                     \
  }                                                                                                                  \
  static int32_t psup_kit_open_(uint32_t index, parity_plugin_device_t **out) {                                      \
    return psup_kit_device_open(&(kit), index, out);                                                                 \
  }                                                                                                                  \
  static int32_t psup_kit_supports_(parity_plugin_device_t *dev, const parity_op_desc_t *d) {                        \
    return psup_kit_supports(&(kit), dev, d);                                                                        \
  }                                                                                                                  \
  static int32_t psup_kit_write_(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,               \
                                 const void *src, uint64_t size) {                                                   \
    return psup_kit_buffer_write(&(kit), dev, b, off, src, size);                                                    \
  }                                                                                                                  \
  static int32_t psup_kit_read_(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,     \
                                uint64_t size) {                                                                     \
    return psup_kit_buffer_read(&(kit), dev, b, off, dst, size);                                                     \
  }                                                                                                                  \
  static int32_t psup_kit_copy_(parity_plugin_device_t *dev, parity_plugin_buffer_t *s, uint64_t so,                 \
                                parity_plugin_buffer_t *t, uint64_t to, uint64_t size) {                             \
    return psup_kit_buffer_copy(&(kit), dev, s, so, t, to, size);                                                    \
  }                                                                                                                  \
  static int32_t psup_kit_fill_(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size, \
                                const void *pattern, uint32_t psize) {                                               \
    return psup_kit_buffer_fill(&(kit), dev, b, off, size, pattern, psize);                                          \
  }                                                                                                                  \
  PSUP_KIT_FAMILY_(kit, elementwise, ELEMENTWISE)                                                                    \
  PSUP_KIT_FAMILY_(kit, reduce, REDUCE)                                                                              \
  PSUP_KIT_FAMILY_(kit, matmul, MATMUL)                                                                              \
  PSUP_KIT_FAMILY_(kit, conv2d, CONV2D)                                                                              \
  PSUP_KIT_FAMILY_(kit, softmax, SOFTMAX)

/* The plugin's function table `name` (static): PSUP_KIT_ENTRIES' entries, and the plugin's own
 * init, shutdown, device_open/close, buffer_alloc/free and synchronize named prefix_... */
#define PSUP_KIT_API(name, prefix) \
  static const parity_plugin_api_t name = {PSUP_KIT_API_OWN_(prefix), PSUP_KIT_API_FIELDS}
/* the fields PSUP_KIT_API and PSUP_KIT_API_PLANS take from the plugin's own functions */
#define PSUP_KIT_API_OWN_(prefix)                                                                                    \
  .struct_size = sizeof(parity_plugin_api_t), .init = prefix##_init, .shutdown = prefix##_shutdown,                  \
  .device_close = prefix##_device_close, .buffer_alloc = prefix##_buffer_alloc, .buffer_free = prefix##_buffer_free, \
  .synchronize = prefix##_synchronize

/* PSUP_KIT_API with the ABI 1.1 plan entries (the kit's psup_kit_plans_t filled): expand
 * PSUP_KIT_PLAN_ENTRIES(kit) after PSUP_KIT_ENTRIES(kit). */
#define PSUP_KIT_PLAN_ENTRIES(kit)                                                                                  \
  static int32_t psup_kit_plan_prepare_(parity_plugin_device_t *dev, const parity_plan_command_t *cmds, uint32_t n, \
                                        parity_plugin_plan_t **out) {                                               \
    return psup_kit_plan_prepare(&(kit), dev, cmds, n, out);                                                        \
  }                                                                                                                 \
  static int32_t psup_kit_plan_run_(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {                         \
    return psup_kit_plan_run(&(kit), dev, p);                                                                       \
  }                                                                                                                 \
  static void psup_kit_plan_release_(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {                        \
    psup_kit_plan_release(&(kit), dev, p);                                                                          \
  }
#define PSUP_KIT_API_PLANS(name, prefix)                                                                           \
  static const parity_plugin_api_t name = {PSUP_KIT_API_OWN_(prefix), .plan_prepare = psup_kit_plan_prepare_,      \
                                           .plan_run = psup_kit_plan_run_, .plan_release = psup_kit_plan_release_, \
                                           PSUP_KIT_API_FIELDS}

/* The plugin's one exported symbol: version negotiation with the identity note `identity`
 * (PARITY_PLUGIN_IDENTITY), the host kept in `kit`, the function table api_expr. */
#define PSUP_KIT_QUERY(kit, identity, api_expr)                                                                \
  PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,                   \
                                                   const parity_host_api_t *host, parity_plugin_info_t *out) { \
    (void)host_minor;                                                                                          \
    int32_t st = psup_negotiate(host_major, out, identity.name, identity.backend, identity.version);           \
    if (st != PARITY_STATUS_OK) return st;                                                                     \
    psup_kit_set_host(&(kit), host);                                                                           \
    out->api = (api_expr);                                                                                     \
    return PARITY_STATUS_OK;                                                                                   \
  }

/* The parity_plugin_api_t fields PSUP_KIT_ENTRIES defines (PSUP_KIT_API adds the plugin's own). */
#define PSUP_KIT_API_FIELDS                                                                                          \
  .get_device_count = psup_kit_count_, .get_device_info = psup_kit_info_, .device_open = psup_kit_open_,             \
  .supports = psup_kit_supports_, .buffer_write = psup_kit_write_, .buffer_read = psup_kit_read_,                    \
  .buffer_copy = psup_kit_copy_, .buffer_fill = psup_kit_fill_, .elementwise_forward = psup_kit_elementwise_forward, \
  .elementwise_backward = psup_kit_elementwise_backward, .reduce_forward = psup_kit_reduce_forward,                  \
  .reduce_backward = psup_kit_reduce_backward, .matmul_forward = psup_kit_matmul_forward,                            \
  .matmul_backward = psup_kit_matmul_backward, .conv2d_forward = psup_kit_conv2d_forward,                            \
  .conv2d_backward = psup_kit_conv2d_backward, .softmax_forward = psup_kit_softmax_forward,                          \
  .softmax_backward = psup_kit_softmax_backward

#endif
