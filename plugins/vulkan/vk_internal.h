/* vk_internal.h — shared by the Vulkan plugin's files. Each kernel family has a host file
 * (elementwise.c, reduce.c, ...) and a shader file (shaders/<family>.comp, compiled to SPIR-V
 * variants at build time). Device setup, memory, command batches, pipelines and the pipeline
 * cache live apart from the kernels.
 *
 * Dispatch model: every operand is bound as a storage buffer window [bind_off, bind_off+range)
 * that starts at or below the tensor's lowest byte, aligned to minStorageBufferOffsetAlignment
 * and to the element size; shaders index it in elements from base = (offset - bind_off)/esize,
 * with 32-bit arithmetic (windows are at most 2^31 bytes). Binding 0 is the dispatch's parameter
 * block (geometry), in a host-visible ring, followed there by a 16-byte window of the dispatch's
 * own that the operand slots it does not use are bound to; small scalars travel in push
 * constants. */
#ifndef PARITY_VK_INTERNAL_H
#define PARITY_VK_INTERNAL_H

#include <stdint.h>
#include <vulkan/vulkan.h>

#include "parity_plugin.h"
#include "parity_support/contract.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/gpu_kit.h"
#include "parity_support/layout.h"
#include "parity_support/ops.h"
#include "vk_shaders.h" /* generated: VK_SPV_* ids, vk_spirv[] */

/* ---- errors (vk_errors.c) ------------------------------------------------------------------ */
/* The plugin's host kit (parity_support/gpu_kit.h: messages, device slots, dispatch, buffer
 * checks); vk_plugin.c fills it. Messages are written without the "vulkan: " prefix: the kit
 * adds it. */
extern psup_kit_t vkp_kit;
#define vkp_fail(status, ...) psup_kit_fail(&vkp_kit, (status), __VA_ARGS__)
#define vkp_log(level, ...) psup_kit_log(&vkp_kit, (level), __VA_ARGS__)
const char *vkp_result_name(VkResult r); /* "VK_ERROR_OUT_OF_DEVICE_MEMORY", NULL if unknown */
int32_t vkp_result_status(VkResult r);
/* Report "vulkan: <call>: VK_NAME (what)" and return the mapped status. */
int32_t vkp_vk_fail(VkResult r, const char *call, const char *what);
/* a validation layer's message, short and without addresses: "<id>: <what>" (vk_errors.c) */
void vkp_condense_validation(const char *id, const char *msg, char *out, size_t n);
#define VKP_CHECK(expr, call, what) PSUP_KIT_CHECK(VkResult, expr, VK_SUCCESS, vkp_vk_fail(r_, call, what))

/* ---- what init() learned about each physical device (read-only afterwards) ----------------- */
typedef struct vkp_slot_t {
  psup_kit_slot_t kit; /* info record and capabilities (parity_support/gpu_kit.h) */
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  uint32_t queue_family;
  int has_f64, has_i64, has_16bit, has_8bit, nan_preserve;
  int hw_f64;             /* the device has shaderFloat64 (has_f64: f64 kernels are enabled) */
  int dmath;              /* f32/f16/bf16 on the software double path (PARITY_VULKAN_FP64=on) */
  int cpu_like;           /* lavapipe, SwiftShader: few large work-groups */
  uint64_t max_range;     /* bytes one binding may span: min(maxStorageBufferRange, 2^31) */
  uint32_t max_allocs;    /* maxMemoryAllocationCount, or PARITY_VULKAN_MAX_ALLOCATIONS if smaller */
  uint32_t min_align;     /* minStorageBufferOffsetAlignment, or PARITY_VULKAN_MIN_ALIGN if larger */
  uint32_t max_groups[3]; /* maxComputeWorkGroupCount */
  uint32_t max_local;     /* maxComputeWorkGroupInvocations */
  uint32_t subgroup_size;
  uint32_t shared_bytes; /* maxComputeSharedMemorySize */
} vkp_slot_t;

/* The plugin's environment variables, checked once at init (vk_knobs.c; plugins/vulkan/README.md). */
enum { VKP_FP64_AUTO, VKP_FP64_ON, VKP_FP64_OFF };
/* the matmul kernel (shaders/matmul.comp): auto picks blocked on CPU-like devices (lavapipe), tiled
 * on GPUs where a 16 x 16 tile fits, else simple */
enum { VKP_MM_AUTO, VKP_MM_SIMPLE, VKP_MM_BLOCKED, VKP_MM_TILED };
typedef struct vkp_knobs_t {
  int fp64;               /* PARITY_VULKAN_FP64: VKP_FP64_* */
  int validation;         /* PARITY_VULKAN_VALIDATION: 0 off, 1 on, 2 with synchronization validation,
                             3 with GPU-assisted validation */
  int pipeline_cache;     /* PARITY_VULKAN_PIPELINE_CACHE: 0 off */
  int matmul;             /* PARITY_VULKAN_MATMUL: VKP_MM_* (matmul.c) */
  uint32_t max_groups;    /* PARITY_VULKAN_MAX_GROUPS: 0 by device */
  int unsafe_no_barriers; /* PARITY_VULKAN_UNSAFE_NO_BARRIERS (tests): 1 every in-batch barrier dropped,
                             2 (war) those only a write after a read needs */
  uint32_t softmax_rows;  /* PARITY_VULKAN_SOFTMAX_ROWS: rows per softmax work-group; 0 by the loop budget */
  uint32_t fold_groups;   /* PARITY_VULKAN_FOLD_GROUPS: work-groups in x before folding into y; 0 by device */
  int lane_order;         /* PARITY_VULKAN_LANE_ORDER (+ _SEED): specialization constant 5 of the
                             shared-memory kernels: 0 natural, 1 reverse, 2 + seed shuffled */
  int plan_submit;        /* PARITY_VULKAN_PLAN_SUBMIT: 0 auto, 1 own (a submission per replay), 2 batch
                             (a secondary command buffer executed in the current batch) */
  uint32_t plan_fail_at;  /* PARITY_VULKAN_PLAN_FAIL_AT (tests): recording a plan fails at its Nth
                             command (0: never) */
  int scratch;            /* PARITY_VULKAN_SCRATCH: PSUP_SCRATCH_* (parity_support/gpu_kit.h) */
  uint32_t max_allocs;    /* PARITY_VULKAN_MAX_ALLOCATIONS (tests): the device's maxMemoryAllocationCount
                           * taken as at most this (4,096 on some drivers); 0: the device's */
  int suballoc;           /* PARITY_VULKAN_SUBALLOC: 0 every buffer its own allocation; 1 small ones share
                           * blocks (default; vk_suballoc.c) */
  uint32_t buffer_types;  /* PARITY_VULKAN_BUFFER_MEMORY_TYPES, _RING_MEMORY_TYPES (tests): masks ANDed */
  uint32_t ring_types;    /* into buffers' and host rings' memoryTypeBits (fewer types allowed); all */
  uint32_t min_align;     /* PARITY_VULKAN_MIN_ALIGN: descriptor offsets aligned as if the device's
                           * minStorageBufferOffsetAlignment were at least this (a GPU's rule on
                           * lavapipe, whose limit is 16); 0: the device's */
} vkp_knobs_t;
extern vkp_knobs_t vkp_knobs;
int32_t vkp_read_knobs(void);

const vkp_slot_t *vkp_slot(uint32_t index);
extern VkInstance vkp_instance;
/* First validation-layer error since the last check (PARITY_VULKAN_VALIDATION); NULL if none. */
const char *vkp_take_validation_error(void);

/* ---- memory ----------------------------------------------------------------------------------- */
typedef struct vkp_sub_block_t vkp_sub_block_t; /* vk_suballoc.c */
struct parity_plugin_buffer_t {
  VkBuffer buf;
  VkDeviceMemory mem;   /* its own allocation, or VK_NULL_HANDLE in a block's slot: */
  vkp_sub_block_t *sub; /* the block (vk_suballoc.c) */
  uint32_t sub_slot;
  uint64_t size;     /* what the host asked for */
  uint64_t alloc;    /* VkBuffer size (>= 16, multiple of 4) */
  uint64_t last_use; /* batch serial of the last command that used it */
};

/* ---- batches: command buffers recorded and submitted in order -------------------------------- */
#define VKP_SLOTS 3        /* batches in flight */
#define VKP_MAX_BINDINGS 9 /* binding 0: params; 1..7: operands; 8: math tables */
#define VKP_BATCH_DISPATCHES 512
#define VKP_PARAM_BYTES (256u * 1024u)
#define VKP_STAGING_BYTES (16u * 1024u * 1024u)
#define VKP_TRACK 64 /* buffers tracked between barriers */

typedef struct vkp_batch_t {
  VkCommandBuffer cmd;
  VkDescriptorPool pool;
  uint64_t serial; /* timeline value signalled when this batch completes (0: never submitted) */
  uint32_t sets;   /* descriptor sets taken from the pool: one per dispatch */
  uint64_t param_used, staging_used;
  int recording;
} vkp_batch_t;

/* A host-visible, coherent, persistently mapped buffer. */
typedef struct vkp_host_buf_t {
  VkBuffer buf;
  VkDeviceMemory mem;
  uint8_t *map;
  uint64_t size;
} vkp_host_buf_t;

typedef struct vkp_pipe_t {
  uint64_t key; /* spv id, op, local size, extra; 0 = empty */
  VkPipeline pipe;
} vkp_pipe_t;

struct parity_plugin_device_t {
  uint32_t index;
  const vkp_slot_t *slot;
  VkDevice dev;
  VkQueue queue;
  VkCommandPool cmd_pool;
  VkSemaphore timeline;
  uint64_t submitted; /* last serial submitted */
  uint64_t completed; /* last serial known complete */
  vkp_batch_t batch[VKP_SLOTS];
  uint32_t cur; /* batch being recorded */
  vkp_host_buf_t params[VKP_SLOTS], staging[VKP_SLOTS];
  uint32_t mem_device, mem_host; /* memory type indices preferred for buffers and host rings */
  VkPhysicalDeviceMemoryProperties mem_props;
  uint32_t allocs;       /* live VkDeviceMemory allocations (buffers, blocks, host rings): < max_allocs */
  vkp_sub_block_t **sub; /* blocks of small buffers (vk_suballoc.c) */
  uint32_t nsub;
  int device_is_host_visible;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipe_layout;
  VkPipelineCache pcache;
  int pcache_dirty;
  VkShaderModule modules[VK_SPV_COUNT];
  vkp_pipe_t *pipes;
  uint32_t pipe_cap, pipe_count;
  /* hazard tracking since the last barrier: buffers written / read */
  VkBuffer written[VKP_TRACK], read[VKP_TRACK];
  uint32_t nwritten, nread;
  int need_barrier_all;            /* a full barrier before the next command of the batch (after a replayed plan) */
  uint32_t max_groups;             /* cap on work-groups per dispatch; shaders loop past it */
  uint32_t fold_x;                 /* work-groups in x before the rest fold into y (maxComputeWorkGroupCount[0],
                          or PARITY_VULKAN_FOLD_GROUPS) */
  uint32_t local;                  /* default work-group size for 1-D kernels */
  parity_plugin_buffer_t *scratch; /* grows on demand (vkp_scratch) */
  parity_plugin_buffer_t *mathtab; /* the software math library's tables (vk_mathtab.c) */
  int fused_fma64;                 /* fma() on doubles rounds once (probed at open, vk_probe.c) */
  int fused_fma32;                 /* fma() on floats rounds once */
  int unsafe_no_barriers;          /* test knob PARITY_VULKAN_UNSAFE_NO_BARRIERS: omit in-batch barriers */
  struct {
    const char *kernel, *suffix; /* static strings (elementwise.c) */
    int32_t op, dtype;
    int spv;
  } spv_cache[128];          /* elementwise variants found by name, per op and dtype */
  parity_plugin_plan_t *rec; /* the plan being recorded (vk_plan.c), NULL when eager */
  int plan_in_batch;         /* replays run in the current batch (vk_plan.c), not submitted alone */
  uint32_t plans_live;       /* plans prepared or being recorded and not yet released */
};

/* The entries the kit does not write: device open/close (vk_device.c), buffers, transfers and
 * synchronize (vk_memory.c, called by the kit after its argument checks), the function table
 * (vk_plugin.c). */
PSUP_KIT_DECLARE_PLUGIN(vkp);
/* memory and queue: vk_memory.c */
/* Memory for a buffer (host 0) or a host-visible ring (host 1) with requirements `req`, for `what`:
 * of a type its memoryTypeBits allow (the device's preferred one where allowed; DEVICE_ERROR naming
 * the bits where none fits), within the device's maxMemoryAllocationCount (OUT_OF_MEMORY naming it
 * past that: the core then drains its buffer cache and tries again); vkp_memory_free gives it back. */
int32_t vkp_memory_alloc(parity_plugin_device_t *dev, const VkMemoryRequirements *req, int host, const char *what,
                         VkDeviceMemory *out, uint32_t *out_type);
/* vk_suballoc.c: whether a buffer with these requirements takes a slot of a shared block; a slot
 * (its block, index, memory and offset to bind at); a slot given back (its block freed with its
 * last slot); every block freed (device close). */
int vkp_sub_fits(const VkMemoryRequirements *req);
int32_t vkp_sub_alloc(parity_plugin_device_t *dev, const VkMemoryRequirements *req, vkp_sub_block_t **out_block,
                      uint32_t *out_slot, VkDeviceMemory *out_mem, uint64_t *out_off);
void vkp_sub_free(parity_plugin_device_t *dev, vkp_sub_block_t *b, uint32_t slot);
void vkp_sub_destroy(parity_plugin_device_t *dev);
void vkp_memory_free(parity_plugin_device_t *dev, VkDeviceMemory mem);
int32_t vkp_host_buf_create(parity_plugin_device_t *dev, uint64_t size, VkBufferUsageFlags usage, vkp_host_buf_t *out);
void vkp_host_buf_destroy(parity_plugin_device_t *dev, vkp_host_buf_t *h);

/* batches: vk_batch.c */
/* The command buffer being recorded (begun on demand). */
int32_t vkp_cmd(parity_plugin_device_t *dev, VkCommandBuffer *out);
/* Submit the current batch (if it has commands); with wait, wait until everything completed. */
int32_t vkp_flush(parity_plugin_device_t *dev, int wait);
/* Submit the current batch (if it has commands) and then `extra` (a plan's command buffer, may be
 * VK_NULL_HANDLE) in one vkQueueSubmit that signals the timeline; *out_serial is its value. */
int32_t vkp_submit(parity_plugin_device_t *dev, VkCommandBuffer extra, uint64_t *out_serial);
/* Wait until timeline value `serial` has been reached. */
int32_t vkp_wait(parity_plugin_device_t *dev, uint64_t serial);
/* A descriptor set of the shared layout for one dispatch: from the current batch's pool, or the
 * recording plan's. */
int32_t vkp_descriptor_set(parity_plugin_device_t *dev, VkDescriptorSet *out);
/* A buffer a recorded command uses: its last_use, and the recording plan's list. */
void vkp_mark_used(parity_plugin_device_t *dev, parity_plugin_buffer_t *b);
/* The full barrier each batch (and each plan) starts with. */
void vkp_full_barrier(VkCommandBuffer cmd);
/* Record a barrier before a command that reads `reads` and writes `writes` if it depends on
 * earlier commands of this batch (RAW, WAR, WAW on the same buffer). */
int32_t vkp_hazard(parity_plugin_device_t *dev, const VkBuffer *reads, uint32_t nreads, const VkBuffer *writes,
                   uint32_t nwrites);
/* Space in the current batch's staging (or params) ring; flushes and rotates when full.
 * *out_off is the offset within that ring buffer. */
int32_t vkp_staging(parity_plugin_device_t *dev, uint64_t bytes, uint64_t align, vkp_host_buf_t **out_buf,
                    uint64_t *out_off);
int32_t vkp_params(parity_plugin_device_t *dev, uint64_t bytes, vkp_host_buf_t **out_buf, uint64_t *out_off);
int32_t vkp_batch_init(parity_plugin_device_t *dev);
void vkp_batch_destroy(parity_plugin_device_t *dev);

/* ---- pipelines and dispatch (vk_dispatch.c) --------------------------------------------------- */
/* One operand binding: a tensor (or NULL) and whether the kernel writes it. */
typedef struct vkp_operand_t {
  const parity_tensor_desc_t *t;
  int written;
} vkp_operand_t;

/* A dispatch: shader variant, specialization values, operands (bindings 1..n), parameter block
 * (binding 0) and push constants. groups[3] work-groups (already folded under the limits). */
#define VKP_MAX_OPERANDS 7
#define VKP_PUSH_BYTES 128
typedef struct vkp_launch_t {
  int spv;        /* VK_SPV_* */
  int32_t op;     /* specialization constant 1 */
  uint32_t local; /* specialization constant 0 (work-group size x) */
  int32_t extra;  /* specialization constant 2 */
  uint32_t noperands;
  vkp_operand_t operands[VKP_MAX_OPERANDS];
  const void *params; /* copied into the parameter ring; may be NULL */
  uint32_t params_size;
  uint8_t push[VKP_PUSH_BYTES];
  uint32_t push_size;
  uint32_t groups[3];
} vkp_launch_t;

/* Element offset of each operand within its binding window (operand order), for the params. */
typedef struct vkp_bases_t {
  int64_t base[VKP_MAX_OPERANDS];
} vkp_bases_t;

/* Compute binding windows and element bases for the launch's operands. */
int32_t vkp_bind_bases(parity_plugin_device_t *dev, const vkp_launch_t *l, vkp_bases_t *out);
/* Record the dispatch (pipeline created on first use). */
int32_t vkp_dispatch(parity_plugin_device_t *dev, const vkp_launch_t *l);
/* Work-groups for `items` work-items of size `local`, folded into x/y under the device limits and
 * the cap (kernels loop over the rest with a grid stride). */
void vkp_groups_for(const parity_plugin_device_t *dev, uint64_t items, uint32_t local, uint32_t groups[3]);
/* `total` work-groups as x * y (x at most dev->fold_x, y = ceil(total / x) under the device limit;
 * groups past `total` find no work in the kernels' grid-stride loops). */
void vkp_fold_groups(const parity_plugin_device_t *dev, uint64_t total, uint32_t groups[3]);
/* llvmpipe (lavapipe) ends every loop of a shader invocation once 65535 loop iterations have run
 * in total over all its loops (LP_MAX_TGSI_LOOP_ITERATIONS), silently. On CPU-like devices the
 * work per invocation is therefore bounded: `cost` is an upper estimate of the loop iterations one
 * item takes, and vkp_groups_bounded launches enough work-groups that no invocation exceeds
 * VKP_LOOP_BUDGET, past the PARITY_VULKAN_MAX_GROUPS cap if need be. */
#define VKP_LOOP_BUDGET 32768u
/* loop iterations of a pairwise (PWS_REDUCE) sum of `terms` terms: about L/8 + 64 for the whole
 * blocks, and up to 15 more for the last partial block (a loop, not unrolled: shaders/common.glsl) */
static inline uint64_t vkp_reduce_cost(int64_t terms) { return (uint64_t)terms / 8u + 88u; }
void vkp_groups_bounded(const parity_plugin_device_t *dev, uint64_t items, uint32_t local, uint64_t cost,
                        uint32_t groups[3]);

/* mirrors ITER_PARAMS in shaders/common.glsl (elementwise and reduce kernels) */
typedef struct vkp_iter_t {
  int32_t rank, n, pad0, pad1;
  int32_t shape[PARITY_MAX_RANK];
  int32_t strides[6][PARITY_MAX_RANK];
  int32_t base[6];
  int32_t pad2[2];
} vkp_iter_t;
_Static_assert(sizeof(vkp_iter_t) == 272, "vkp_iter_t must match ITER_PARAMS in common.glsl");

/* OK when the tensor's byte extent fits one binding window (maxStorageBufferRange, 2^31 bytes). */
int32_t vkp_check_window(const parity_plugin_device_t *dev, const parity_op_desc_t *d);
/* A device scratch buffer of at least `bytes` (contents undefined). Reuse across dispatches is
 * safe: hazard tracking orders them. */
int32_t vkp_scratch(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out);
/* a new scratch buffer of at least `bytes` (the size rule eager and plan scratch share) */
int32_t vkp_scratch_alloc(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out);
/* Measure device behaviour the kernels depend on (vk_probe.c): fused_fma64. */
int32_t vkp_probe(parity_plugin_device_t *dev);
/* Upload the math tables (binding 8 of every kernel). */
int32_t vkp_mathtab_create(parity_plugin_device_t *dev);
int32_t vkp_pipeline_cache_load(parity_plugin_device_t *dev);
void vkp_pipeline_cache_save(parity_plugin_device_t *dev);

/* ---- prepared plans (vk_plan.c): the kit's psup_kit_plans_t, and the recording side of the
 * batch functions above (while dev->rec is set, vkp_cmd, the rings, descriptor sets and scratch
 * come from the plan) ---------------------------------------------------------------------- */
int32_t vkp_plan_begin(parity_plugin_device_t *dev);
int32_t vkp_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out);
int32_t vkp_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
void vkp_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
VkCommandBuffer vkp_rec_cmd(parity_plugin_device_t *dev);
int32_t vkp_rec_host(parity_plugin_device_t *dev, uint64_t bytes, uint64_t align, vkp_host_buf_t **out_buf,
                     uint64_t *out_off);
int32_t vkp_rec_set(parity_plugin_device_t *dev, VkDescriptorSet *out);
int32_t vkp_rec_scratch(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out);
int32_t vkp_rec_track(parity_plugin_device_t *dev, parity_plugin_buffer_t *b);

/* ---- kernel families ------------------------------------------------------------------------- */
PSUP_KIT_DECLARE_FAMILIES(vkp);
/* each family's device limits beyond the operand contract (the kit's families table) */
int32_t vkp_elementwise_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t vkp_reduce_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t vkp_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t vkp_conv2d_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t vkp_softmax_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d);

/* conv2d and pooling: one parameter block, the window geometry (conv.c) */
typedef struct vkp_cv_t { /* mirrors Params in shaders/window.glsl (std430, all int) */
  int32_t xs[4], ws[4], ys[4];
  int32_t gxs[4], gws[4], gys[4];
  int32_t base[8];
  int32_t N, C, H, W, O, KH, KW, OH, OW;
  int32_t sh, sw, pt, pl, dh, dw, groups;
  int32_t include_pad, bs, gbs, n;
} vkp_cv_t;
/* The shaders' copy of d's geometry (parity_support/geom_conv.h; 32-bit, windows are at most 2^31
 * bytes); strides and bases 0, for the caller (vkp_cv_strides) and vkp_cv_run. */
void vkp_cv_init(vkp_cv_t *c, const parity_op_desc_t *d);
/* t's four strides into s (nothing when t is NULL). */
void vkp_cv_strides(const parity_tensor_desc_t *t, int32_t *s);
/* One dispatch of kernel k over n items (at most `cost` loop iterations each), operands in kernel
 * order (NULL: unbound) and whether each is written; fills c's bases and count. */
int32_t vkp_cv_run(parity_plugin_device_t *dev, const char *k, int32_t dtype, int32_t op, int32_t extra, vkp_cv_t *c,
                   int64_t n, uint64_t cost, uint32_t nops, const parity_tensor_desc_t *const *t, const int *written);
/* max_pool2d and avg_pool2d (pool.c), which the CONV2D family's entries hand on; an item's loop
 * iterations (conv2d's supports() checks them against llvmpipe's limit) */
int32_t vkp_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t vkp_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
uint64_t vkp_pool_cost(const vkp_cv_t *c, int backward);

/* The variant named "<kernel>_<suffix>" (suffix NULL: "<kernel>"), or -1 with UNSUPPORTED reported. */
int vkp_spv_find(const char *kernel, const char *suffix);
/* The variant of `kernel_suffix` for a floating dtype on this device's math path: on the software
 * double path (slot->dmath) f32/f16/bf16 take the "_dmath" twin where the kernel has one. */
int vkp_spv_find_math(const parity_plugin_device_t *dev, const char *kernel, const char *suffix, int32_t dtype);
/* The reason f64 is unsupported on a slot (NULL when it is supported). */
const char *vkp_f64_missing(const vkp_slot_t *s);

#endif
