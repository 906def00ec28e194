/* parity_plugin.h — the stable plugin ABI of parity, version 1.2.
 *
 * A backend author writes a plugin against this header alone (plus parity_types.h and
 * parity_ops.def beside it).
 * It depends only on the C standard headers <stdint.h> and <stddef.h>.
 *
 * ---------------------------------------------------------------------------------------------
 * VERSIONING
 *   PARITY_ABI_MAJOR changes when anything is removed, reordered or retyped.
 *   PARITY_ABI_MINOR changes when fields are appended to a struct, functions are appended to
 *   parity_plugin_api_t, or values are appended to an enum. See docs/abi-changelog.md.
 *
 * STRUCT SIZES
 *   Every struct that crosses the boundary starts with `uint32_t struct_size`, set by whoever
 *   allocated the struct to sizeof() as *that side* compiled it. The other side reads (or
 *   writes) only the fields that lie entirely inside struct_size — PARITY_HAS_FIELD() tells —
 *   and uses the documented default for the rest. Both old-plugin/new-host and
 *   new-plugin/old-host work within one major version.
 *
 * ENTRY POINT
 *   A plugin exports exactly one symbol, PARITY_PLUGIN_ENTRY_NAME ("parity_plugin_query"), of
 *   type parity_plugin_query_fn. The host calls it once with its own ABI version; the plugin
 *   either fills parity_plugin_info_t with the version it speaks (same major, any minor) and its
 *   function table, or refuses with PARITY_STATUS_VERSION_MISMATCH and a reason string.
 *   Everything else in a plugin is hidden (-fvisibility=hidden).
 *
 * OWNERSHIP
 *   Handles (parity_plugin_device_t, parity_plugin_buffer_t) are opaque and owned by the plugin; the host frees
 *   them with the matching *_close / *_free call. Descriptors and host memory passed into a call
 *   are borrowed for the duration of that call only. Strings returned by the plugin in
 *   parity_plugin_info_t are static and live as long as the plugin is loaded.
 *
 * ERRORS
 *   Every fallible entry returns a parity_status_t value (as int32_t). Before returning anything
 *   but PARITY_STATUS_OK, the plugin calls host->report_error() with a one-line message that says
 *   what failed and the values that matter. A plugin never aborts, never prints, never exits.
 *
 * THREADING
 *   - query() and init() are called once, from one thread, before anything else;
 *     shutdown() is called once, last, after every device is closed.
 *   - get_device_count() and get_device_info() may be called from any thread at any time
 *     between init() and shutdown().
 *   - All calls that take a parity_plugin_device_t are externally synchronized by the host: it never
 *     calls into the same device from two threads at once. Different devices may be used from
 *     different threads concurrently, so a plugin must not keep unsynchronized global state.
 *   - host->report_error() and host->log() may be called from any thread; the host keeps error
 *     messages per thread.
 *   - A plugin is never unloaded while a device or buffer it created is alive.
 *
 * QUEUE
 *   Each device has one in-order queue. Kernel entries and buffer_copy/buffer_fill enqueue work
 *   and may return before it runs; buffer_write copies the host memory before returning (the
 *   caller may reuse it at once) and is ordered after earlier work; buffer_read and synchronize
 *   wait for all earlier work. A plugin should batch dispatches (one command buffer, one stream)
 *   rather than wait per op. An error from deferred work may be reported by a later call.
 *
 * BUFFERS
 *   Memory is an opaque parity_plugin_buffer_t plus byte offsets — never a raw device pointer — so
 *   CUDA, Vulkan, OpenCL and Metal-style devices fit alike.
 * ---------------------------------------------------------------------------------------------
 */
#ifndef PARITY_PLUGIN_H
#define PARITY_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARITY_ABI_MAJOR 1u
#define PARITY_ABI_MINOR 2u

#define PARITY_PLUGIN_ENTRY_NAME "parity_plugin_query"

#if defined(_WIN32)
#define PARITY_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PARITY_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when `field` of struct `type` lies entirely within (ptr)->struct_size. */
#define PARITY_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* Status codes, dtypes, op identities and the device information record, which applications
 * see too (through parity/parity.h), are in parity_types.h. */
#include "parity_types.h"

/* ---- opaque handles --------------------------------------------------------------------- */
typedef struct parity_plugin_device_t parity_plugin_device_t; /* defined by each plugin */
typedef struct parity_plugin_buffer_t parity_plugin_buffer_t; /* defined by each plugin */

/* ---- tensors and op descriptors --------------------------------------------------------- */
#define PARITY_MAX_INPUTS 4
#define PARITY_MAX_OUTPUTS 3

/* A strided view of device memory. Element (i0..i{rank-1}) lives at byte
 * offset_bytes + sum_k(i_k * strides[k]) * dtype_size within `buffer`. Strides are in
 * elements, may be 0 (broadcast) and, for inputs, may be negative or overlapping; outputs never
 * have zero strides or overlap each other. Rank 0 is a scalar. `buffer` is NULL in supports()
 * queries. Elementwise forward ops (UNARY, BINARY, SELECT, same-dtype CAST) may run in place:
 * the output may be exactly the same view as an input; no other aliasing occurs. */
typedef struct parity_tensor_desc_t {
  uint32_t struct_size;
  int32_t dtype; /* parity_dtype_t */
  uint32_t rank;
  uint32_t reserved0;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[PARITY_MAX_RANK];
  parity_plugin_buffer_t *buffer;
  uint64_t offset_bytes;
} parity_tensor_desc_t;

typedef struct parity_conv2d_params_t {
  int32_t stride[2];         /* h, w; >= 1 */
  int32_t padding[4];        /* top, bottom, left, right; >= 0 (pad value 0 for conv/avg, -inf for max) */
  int32_t dilation[2];       /* h, w; >= 1 */
  int32_t groups;            /* conv2d: >= 1, divides C_in and C_out */
  int32_t kernel[2];         /* pooling window h, w (conv2d takes it from the weight) */
  int32_t count_include_pad; /* avg_pool2d: 1 divides by kh*kw, 0 by the in-bounds count */
} parity_conv2d_params_t;

/* Op parameters; which member applies follows from the op's kind. Fixed size (256 bytes) so
 * minor versions can append members without moving later descriptor fields. */
typedef union parity_op_params_t {
  struct {
    double alpha;
  } unary; /* leaky_relu slope */
  struct {
    uint32_t axes_mask; /* bit k set: axis k of the input is reduced */
    uint32_t reserved;
  } reduce;
  parity_conv2d_params_t conv2d; /* CONV2D and POOL2D */
  struct {
    int32_t axis;
  } softmax; /* 0 <= axis < rank */
  uint8_t reserved[256];
} parity_op_params_t;

/* OPERANDS by kind (x = input, y = forward output, dy = gradient of the loss w.r.t. y).
 * In every entry all tensors of one op have the same rank; broadcasting is expressed by the
 * host through zero strides, so inputs always arrive with the output's shape (matmul: same
 * batch shape). A backward gradient output has exactly the shape of the forward input it
 * belongs to (with its own non-zero strides); the host sums it back over broadcast axes.
 * A NULL output pointer in backward means "not needed": do not compute it.
 *
 *  UNARY    fwd  in {x}                 out {y}
 *           bwd  in {x, y, dy}          out {dx}
 *  BINARY   fwd  in {a, b}              out {c}
 *           bwd  in {a, b, c, dc}       out {da, db}      (maximum/minimum: ties split 1/2)
 *  COMPARE  fwd  in {a, b}              out {bool c}      (no backward)
 *  SELECT   fwd  in {cond, a, b}        out {c}           cond: bool, any non-zero byte = true
 *           bwd  in {cond, dc}          out {da, db}
 *  CAST     fwd  in {x}                 out {y}           (no backward; host casts dy back)
 *  REDUCE   fwd  in {x}                 out {y}           y has x's rank with size 1 on every
 *                                                         reduced axis; argmax/argmin give i64
 *                                                         flat index within the reduced axes
 *           bwd  in {x, y, dy}          out {dx}          (max/min: ties split evenly)
 *  MATMUL   fwd  in {a[..,m,k], b[..,k,n]} out {c[..,m,n]}
 *           bwd  in {a, b, dc}          out {da, db}
 *  CONV2D   fwd  in {x[N,C,H,W], w[O,C/g,KH,KW], bias[O] or NULL} out {y[N,O,OH,OW]}
 *           bwd  in {x, w, dy}          out {dx, dw, dbias}
 *  POOL2D   fwd  in {x[N,C,H,W]}        out {y[N,C,OH,OW]}
 *           bwd  in {x, y, dy}          out {dx}          (max: ties split evenly per window)
 *  SOFTMAX  fwd  in {x}                 out {y}
 *           bwd  in {y, dy}             out {dx}          (uses the stored y only)
 *
 * SHAPE-ONLY inputs: the backward of sum, mean, add, sub and neg, and of avg_pool2d, is a
 * function of the incoming gradient alone (dy, dc); their other inputs (x, y; a, b, c) carry
 * shapes and layouts, and a plugin's results must not depend on their values (a NaN there
 * changes nothing). The host relies on it: a prepared plan leaves out what only computes them
 * (parity_support/operands.h: psup_operand_values_unused), and the conformance suite runs every
 * such backward case a second time with those inputs NaN and requires the same bits.
 */
typedef struct parity_op_desc_t {
  uint32_t struct_size;
  int32_t op;        /* parity_op_t */
  int32_t direction; /* parity_direction_t */
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t flags; /* reserved, 0 */
  const parity_tensor_desc_t *inputs[PARITY_MAX_INPUTS];
  const parity_tensor_desc_t *outputs[PARITY_MAX_OUTPUTS];
  parity_op_params_t params;
} parity_op_desc_t;

/* ---- host services, given to the plugin at query time ---------------------------------- */
enum { PARITY_LOG_DEBUG = 0, PARITY_LOG_INFO = 1, PARITY_LOG_WARNING = 2 };

typedef struct parity_host_api_t {
  uint32_t struct_size;
  uint32_t reserved0;
  void *host_data; /* passed back to the callbacks */
  /* Record the message for the status about to be returned. Thread-safe; copies the text. */
  void (*report_error)(void *host_data, int32_t status, const char *message);
  /* Diagnostic text; shown with PARITY_LOG=debug. Thread-safe. */
  void (*log)(void *host_data, int32_t level, const char *message);
  /* ABI 1.2: the same two with the text's length in bytes: the host reads exactly `length` bytes
   * (stopping early at a NUL; at most 1023 are kept), so a message needs no terminator and a
   * missing one cannot make the host read past it. A 1.2 plugin uses these when the host has them
   * (PARITY_HAS_FIELD(host, parity_host_api_t, report_error_n)); parity_support's psup_report
   * and psup_log do. */
  void (*report_error_n)(void *host_data, int32_t status, const char *message, size_t length);
  void (*log_n)(void *host_data, int32_t level, const char *message, size_t length);
} parity_host_api_t;

/* ---- the plugin's function table -------------------------------------------------------- */
/* Kernel entry: enqueue one op described by `desc` on the device's queue.
 * One validation per op: the host checks every descriptor against the operand contract (the
 * OPERANDS rules above, as parity_support's psup_check_op_desc states them; every operand inside
 * a live buffer of this device) before it calls supports(), and calls a kernel entry only with a
 * descriptor supports() accepted on this device. Plugins need not check either again: entries
 * check only what is cheap (psup_check_kernel_entry). A replayed plan calls the entries directly
 * with the descriptors it recorded, each of which passed those checks when it was recorded. */
typedef int32_t (*parity_kernel_fn)(parity_plugin_device_t *dev, const parity_op_desc_t *desc);

/* ---- prepared plans (ABI 1.1, optional) ------------------------------------------------- */
/* A plan is a recorded sequence of commands the host replays many times (a prepared training
 * step: parity_plan_begin/end/replay). A plugin that offers plan_prepare receives the whole
 * sequence once and may turn it into whatever replays fastest on its device (a CUDA graph, a
 * pre-recorded command buffer, a list of kernels with their geometry derived once). */
typedef struct parity_plugin_plan_t parity_plugin_plan_t; /* defined by each plugin */

typedef enum parity_plan_command_kind_t {
  PARITY_PLAN_COMMAND_KERNEL = 1, /* `op`: what the op's kernel entry would do with it */
  PARITY_PLAN_COMMAND_FILL = 2,   /* what buffer_fill(buffer, offset_bytes, size_bytes, pattern,
                                     pattern_size) would do */
  PARITY_PLAN_COMMAND_FORCE_32 = 0x7fffffff
} parity_plan_command_kind_t;

typedef struct parity_plan_command_t {
  uint32_t struct_size;
  int32_t kind;                   /* parity_plan_command_kind_t */
  const parity_op_desc_t *op;     /* KERNEL: a descriptor supports() accepted on this device */
  parity_plugin_buffer_t *buffer; /* FILL */
  uint64_t offset_bytes;          /* FILL */
  uint64_t size_bytes;            /* FILL: a multiple of pattern_size */
  uint8_t pattern[8];             /* FILL: the first pattern_size bytes (1, 2, 4 or 8) */
  uint32_t pattern_size;          /* FILL */
  uint32_t reserved0;
} parity_plan_command_t;

typedef struct parity_plugin_api_t {
  uint32_t struct_size;
  uint32_t reserved0;

  /* lifecycle. init: PARITY_STATUS_UNAVAILABLE + message when the backend cannot run here
   * (e.g. "no CUDA driver"); the host then lists the plugin as unavailable. */
  int32_t (*init)(void);
  void (*shutdown)(void);

  /* devices */
  int32_t (*get_device_count)(uint32_t *out_count);
  int32_t (*get_device_info)(uint32_t index, parity_device_info_t *out_info);
  int32_t (*device_open)(uint32_t index, parity_plugin_device_t **out_dev);
  void (*device_close)(parity_plugin_device_t *dev);

  /* buffers and queue */
  int32_t (*buffer_alloc)(parity_plugin_device_t *dev, uint64_t size_bytes, parity_plugin_buffer_t **out_buf);
  void (*buffer_free)(parity_plugin_device_t *dev, parity_plugin_buffer_t *buf);
  int32_t (*buffer_write)(parity_plugin_device_t *dev, parity_plugin_buffer_t *dst, uint64_t dst_offset,
                          const void *src, uint64_t size_bytes);
  int32_t (*buffer_read)(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_offset, void *dst,
                         uint64_t size_bytes);
  int32_t (*buffer_copy)(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_offset,
                         parity_plugin_buffer_t *dst, uint64_t dst_offset, uint64_t size_bytes);
  /* Fill size_bytes (a multiple of pattern_size; pattern_size 1, 2, 4 or 8) with a pattern. */
  int32_t (*buffer_fill)(parity_plugin_device_t *dev, parity_plugin_buffer_t *dst, uint64_t dst_offset,
                         uint64_t size_bytes, const void *pattern, uint32_t pattern_size);
  int32_t (*synchronize)(parity_plugin_device_t *dev);

  /* PARITY_STATUS_OK when the device can run `desc` (buffers NULL), else UNSUPPORTED with a
   * message naming what is missing. `desc` has passed the host's contract check. Kernel entries
   * may assume supports() said OK. */
  int32_t (*supports)(parity_plugin_device_t *dev, const parity_op_desc_t *desc);

  /* kernel families; each may be NULL (everything in it unsupported) */
  parity_kernel_fn elementwise_forward;
  parity_kernel_fn elementwise_backward;
  parity_kernel_fn reduce_forward;
  parity_kernel_fn reduce_backward;
  parity_kernel_fn matmul_forward;
  parity_kernel_fn matmul_backward;
  parity_kernel_fn conv2d_forward;
  parity_kernel_fn conv2d_backward;
  parity_kernel_fn softmax_forward;
  parity_kernel_fn softmax_backward;

  /* ABI 1.1, optional (all three, or none: a NULL entry or a table whose struct_size ends
   * before them means the host replays a plan by calling the kernel entries one by one).
   * plan_prepare: `commands` (borrowed for this call only) is a sequence the host issued
   *   eagerly on this device while recording, every descriptor one the host validated and
   *   supports() accepted. Every buffer it names stays alive, at the same size, until
   *   plan_release; their contents change between runs (the host writes new inputs).
   *   UNSUPPORTED (with a message) declines: the host then replays command by command.
   * plan_run: enqueue the whole sequence once, in order, with the same results, bit for bit,
   *   as issuing its commands one by one. Errors as a kernel entry reports them.
   * plan_release: free the plan; called once per prepared plan, after its last run. */
  int32_t (*plan_prepare)(parity_plugin_device_t *dev, const parity_plan_command_t *commands, uint32_t count,
                          parity_plugin_plan_t **out_plan);
  int32_t (*plan_run)(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
  void (*plan_release)(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
} parity_plugin_api_t;

/* ---- negotiation ------------------------------------------------------------------------ */
typedef struct parity_plugin_info_t {
  uint32_t struct_size; /* set by the host */
  uint32_t abi_major;   /* the version the plugin speaks; must equal the host's major */
  uint32_t abi_minor;
  uint32_t reserved0;
  const char *name;               /* unique plugin name, e.g. "cpu", "cuda"; selectable by PARITY_BACKEND */
  const char *backend;            /* "cpu" | "cuda" | "vulkan" | "opencl" | anything else */
  const char *version;            /* free-form plugin version */
  const char *refusal;            /* with PARITY_STATUS_VERSION_MISMATCH: why, and what would work */
  const parity_plugin_api_t *api; /* static; struct_size tells how many entries it has */
} parity_plugin_info_t;

/* The one exported symbol. `host` stays valid until the plugin is unloaded. */
typedef int32_t (*parity_plugin_query_fn)(uint32_t host_abi_major, uint32_t host_abi_minor,
                                          const parity_host_api_t *host, parity_plugin_info_t *out_info);

/* ---- identity note (optional) ----------------------------------------------------------- */
/* A plugin may state its name, backend and version in an ELF section of its file, so that a
 * host asked for one backend reads which plugin every other file is without loading it: no
 * dlopen, so none of the other plugins' driver libraries is mapped (on this VM that saves
 * 0.3-0.9 ms per plugin at process start). Plugins without the note are identified by loading
 * them and calling the query, as before; old hosts ignore the section. The host trusts the note
 * only to decide what to load: when it loads the plugin, the query must answer the same name and
 * backend, or the plugin is skipped with both in the reason.
 *   PARITY_PLUGIN_IDENTITY(my_identity, "myplugin", "vulkan", "1.0.0");
 * and the query answers with my_identity.name, .backend and .version (static storage). */
#define PARITY_IDENTITY_SECTION ".parity_identity"
#define PARITY_IDENTITY_MAGIC "parity-identity" /* 15 characters + NUL fill magic[16] */
typedef struct parity_plugin_identity_t {
  char magic[16];       /* PARITY_IDENTITY_MAGIC */
  uint32_t struct_size; /* sizeof(parity_plugin_identity_t) as the plugin compiled it */
  uint32_t abi_major;   /* the ABI the plugin speaks (PARITY_ABI_MAJOR/MINOR) */
  uint32_t abi_minor;
  uint32_t reserved0;
  char name[64]; /* NUL-terminated; as parity_plugin_info_t */
  char backend[64];
  char version[64];
} parity_plugin_identity_t;

#if defined(__GNUC__) && defined(__ELF__)
#define PARITY_IDENTITY_ATTR __attribute__((used, section(PARITY_IDENTITY_SECTION), aligned(8)))
#elif defined(__GNUC__)
#define PARITY_IDENTITY_ATTR __attribute__((used))
#else
#define PARITY_IDENTITY_ATTR
#endif
// clang-format off
#define PARITY_PLUGIN_IDENTITY(var, name, backend, version)                                       \
  PARITY_IDENTITY_ATTR static const parity_plugin_identity_t var = {                            \
      PARITY_IDENTITY_MAGIC, (uint32_t)sizeof(parity_plugin_identity_t), PARITY_ABI_MAJOR,      \
      PARITY_ABI_MINOR, 0, name, backend, version}
// clang-format on

#ifdef __cplusplus
}
#endif
#endif /* PARITY_PLUGIN_H */
