/* gpu_template_plugin.c — a GPU-style parity backend on the host kit (parity_support/gpu_kit.h):
 * a device with its own memory, an in-order queue that runs when the host waits, and kernels
 * launched over a grid of work-groups with a parameter struct, as on OpenCL, Vulkan or CUDA. Its
 * one family is elementwise f32: add, sub and mul forward and backward, and the same-dtype cast (the
 * core's copy). The "driver" here is a few lines of C standing in for yours: replace drv_* with your
 * API's calls and the kernel bodies with your kernels. Everything else a GPU plugin needs (device
 * slots and info, supports(), the kernel entries, buffer-argument checks, messages) is the kit's. */
#include <stdlib.h>
#include <string.h>

#include "parity_support/buffer_args.h"
#include "parity_support/desc.h"
#include "parity_support/gpu_kit.h"
#include "parity_support/negotiate.h"
#include "parity_support/ops.h"

/* ---- the stand-in driver: device memory, an in-order queue, grid launches ---------------------- */
#define GROUP 64        /* work-items per work-group */
#define QUEUE_DEPTH 256 /* commands queued before the queue runs by itself */
#define NOPS 5          /* elementwise operands at most: {a, b, c, dc} -> {da, db} */

typedef struct ew_params_t { /* the kernel's argument struct, packed by the host */
  int32_t op, fwd, nin, nout;
  uint32_t rank;
  int64_t n, shape[PARITY_MAX_RANK];
  int64_t strides[NOPS + 1][PARITY_MAX_RANK];
  float *base[NOPS + 1]; /* element 0 of each operand; NULL: an output that is not needed */
} ew_params_t;

typedef void (*kernel_fn)(const ew_params_t *p, uint64_t item);
typedef struct command_t {
  enum { CMD_WRITE, CMD_COPY, CMD_FILL, CMD_LAUNCH } kind;
  unsigned char *dst;
  const unsigned char *src;
  void *owned; /* a staged write's host copy, freed when it has run */
  uint64_t size;
  unsigned char pattern[8];
  uint32_t psize;
  kernel_fn kernel;
  ew_params_t params;
  uint64_t groups;
} command_t;

struct parity_plugin_buffer_t {
  unsigned char *mem; /* device memory */
  uint64_t size;
};
struct parity_plugin_device_t {
  const psup_kit_slot_t *slot;
  command_t queue[QUEUE_DEPTH];
  uint32_t queued;
};

static void drv_run(command_t *c) {
  switch (c->kind) {
    case CMD_WRITE:
      memcpy(c->dst, c->src, c->size);
      free(c->owned);
      break;
    case CMD_COPY: memmove(c->dst, c->src, c->size); break;
    case CMD_FILL: psup_fill_repeat(c->dst, c->pattern, c->psize, c->size); break;
    case CMD_LAUNCH: /* a GPU runs the groups at once; here, one after another */
      for (uint64_t g = 0; g < c->groups; g++)
        for (uint64_t l = 0; l < GROUP; l++)
          if (g * GROUP + l < (uint64_t)c->params.n) c->kernel(&c->params, g * GROUP + l);
      break;
  }
}
static void drv_finish(parity_plugin_device_t *dev) {
  for (uint32_t i = 0; i < dev->queued; i++) drv_run(&dev->queue[i]);
  dev->queued = 0;
}
static command_t *drv_enqueue(parity_plugin_device_t *dev) {
  if (dev->queued == QUEUE_DEPTH) drv_finish(dev);
  command_t *c = &dev->queue[dev->queued++];
  memset(c, 0, sizeof *c);
  return c;
}

/* ---- the kit: slots, families, buffers -------------------------------------------------------- */
static psup_kit_slot_t slots[1];
static psup_kit_t kit;
#define fail(st, ...) psup_kit_fail(&kit, (st), __VA_ARGS__)

static int32_t g_init(void) {
  psup_kit_slots_reset(&kit);
  psup_kit_slot_t *s = psup_kit_slot_add(&kit, "gpu template device");
  parity_device_info_t *info = &s->info;
  info->type = PARITY_DEVICE_TYPE_OTHER; /* `auto` never picks it: name it to use it */
  strcpy(info->name, "gpu template device (queue on the host)");
  strcpy(info->driver, "parity GPU plugin template");
  info->memory_bytes = info->max_buffer_bytes = 1ull << 30;
  info->dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32); /* claim only what supports() accepts */
  info->flags = PARITY_DEVICE_FLAG_DETERMINISTIC;
  info->denormals = PARITY_DENORMALS_PRESERVED;
  psup_kit_slot_ready(&kit, s);
  return PARITY_STATUS_OK;
}
static void g_shutdown(void) { psup_kit_slots_reset(&kit); }

/* device_open: the kit allocates the zeroed device for an existing slot; a real plugin opens its
 * context and queue here (and on failure the kit calls g_close) */
static int32_t g_device_init(parity_plugin_device_t *dev, uint32_t index) {
  dev->slot = psup_kit_slot_at(&kit, index);
  return PARITY_STATUS_OK;
}
static void g_close(parity_plugin_device_t *dev) {
  drv_finish(dev);
  free(dev);
}

static int32_t g_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  (void)dev;
  parity_plugin_buffer_t *b = calloc(1, sizeof *b);
  if (b) b->mem = calloc(1, size ? size : 1);
  if (!b || !b->mem) {
    free(b);
    return fail(PARITY_STATUS_OUT_OF_MEMORY, "cannot allocate %llu bytes", (unsigned long long)size);
  }
  b->size = size;
  *out = b;
  return PARITY_STATUS_OK;
}
static void g_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  if (!b) return;
  drv_finish(dev); /* queued work may still use it */
  free(b->mem);
  free(b);
}
static uint64_t g_size(const parity_plugin_buffer_t *b) { return b->size; }

/* The kit checked ranges and pointers: these only queue and move bytes. */
static int32_t g_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                       uint64_t size) {
  void *copy = malloc(size ? size : 1); /* the caller may reuse src at once */
  if (!copy) return fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_write: out of host memory");
  memcpy(copy, src, size);
  command_t *c = drv_enqueue(dev);
  *c = (command_t){.kind = CMD_WRITE, .dst = b->mem + off, .src = copy, .owned = copy, .size = size};
  return PARITY_STATUS_OK;
}
static int32_t g_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t size) {
  drv_finish(dev);
  if (size) memcpy(dst, b->mem + off, size);
  return PARITY_STATUS_OK;
}
static int32_t g_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *s, uint64_t so, parity_plugin_buffer_t *t,
                      uint64_t to, uint64_t size) {
  command_t *c = drv_enqueue(dev);
  *c = (command_t){.kind = CMD_COPY, .dst = t->mem + to, .src = s->mem + so, .size = size};
  return PARITY_STATUS_OK;
}
static int32_t g_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                      const void *pattern, uint32_t psize) {
  command_t *c = drv_enqueue(dev);
  *c = (command_t){.kind = CMD_FILL, .dst = b->mem + off, .size = size, .psize = psize};
  memcpy(c->pattern, pattern, psize);
  return PARITY_STATUS_OK;
}
static int32_t g_sync(parity_plugin_device_t *dev) {
  drv_finish(dev);
  return PARITY_STATUS_OK;
}

/* ---- the elementwise family: one kernel, its launch, what it supports ---------------------------- */
/* One work-item per element of the iteration shape; operands in the contract's order (parity_plugin.h,
 * "OPERANDS"): the inputs, then the outputs. */
static void ew_kernel(const ew_params_t *p, uint64_t item) {
  int64_t off[NOPS + 1] = {0}, rest = (int64_t)item;
  for (int32_t a = (int32_t)p->rank - 1; a >= 0; a--) {
    int64_t i = rest % p->shape[a];
    rest /= p->shape[a];
    for (int k = 0; k < p->nin + p->nout; k++) off[k] += i * p->strides[k][a];
  }
  float v[NOPS] = {0}, out[2] = {0};
  for (int k = 0; k < p->nin; k++) v[k] = p->base[k][off[k]];
  if (p->op == PARITY_OP_CAST) {
    out[0] = v[0];     /* f32 -> f32: the core's copy */
  } else if (p->fwd) { /* {a, b} -> {c} */
    out[0] = p->op == PARITY_OP_ADD ? v[0] + v[1] : p->op == PARITY_OP_SUB ? v[0] - v[1] : v[0] * v[1];
  } else { /* {a, b, c, dc} -> {da, db}: dc is the last input */
    float g = v[p->nin - 1];
    out[0] = p->op == PARITY_OP_MUL ? g * v[1] : g;
    out[1] = p->op == PARITY_OP_MUL ? g * v[0] : p->op == PARITY_OP_SUB ? -g : g;
  }
  for (int k = 0; k < p->nout; k++)
    if (p->base[p->nin + k]) p->base[p->nin + k][off[p->nin + k]] = out[k];
}

static float *base_of(const parity_tensor_desc_t *t) { return t ? (float *)(t->buffer->mem + t->offset_bytes) : NULL; }

static int32_t ew_launch(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  ew_params_t p = {.op = d->op,
                   .fwd = d->direction == PARITY_DIRECTION_FORWARD,
                   .nin = (int32_t)d->num_inputs,
                   .nout = (int32_t)d->num_outputs};
  /* every operand has the iteration shape: the output's, or in backward the gradient's */
  const parity_tensor_desc_t *ref = p.fwd ? d->outputs[0] : d->inputs[d->num_inputs - 1];
  p.rank = ref->rank;
  p.n = psup_numel(ref);
  memcpy(p.shape, ref->shape, sizeof p.shape);
  for (int k = 0; k < p.nin + p.nout; k++) {
    const parity_tensor_desc_t *t = k < p.nin ? d->inputs[k] : d->outputs[k - p.nin];
    p.base[k] = base_of(t);
    if (t) memcpy(p.strides[k], t->strides, sizeof p.strides[k]);
  }
  if (p.n == 0) return PARITY_STATUS_OK;
  command_t *c = drv_enqueue(dev);
  *c = (command_t){.kind = CMD_LAUNCH, .kernel = ew_kernel, .params = p, .groups = ((uint64_t)p.n + GROUP - 1) / GROUP};
  return PARITY_STATUS_OK;
}

static int32_t ew_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev; /* the kit checked the operand contract, f32 (the caps) and alignment */
  int op = d->op, fwd = d->direction == PARITY_DIRECTION_FORWARD;
  if (op == PARITY_OP_ADD || op == PARITY_OP_SUB || op == PARITY_OP_MUL || (op == PARITY_OP_CAST && fwd))
    return PARITY_STATUS_OK;
  return fail(PARITY_STATUS_UNSUPPORTED, "%s %s is not implemented", psup_op_name(op),
              psup_direction_name(d->direction));
}

static const psup_kit_slot_t *slot_of(const parity_plugin_device_t *dev) { return dev->slot; }

static psup_kit_t kit = {
    .backend = "template-gpu",
    .slots = slots,
    .slot_size = sizeof slots[0],
    .max_slots = 1,
    .slot_of = slot_of,
    .device_size = sizeof(parity_plugin_device_t),
    .device_init = g_device_init,
    .device_close = g_close,
    .family = {[PARITY_FAMILY_ELEMENTWISE] = {ew_launch, ew_launch, ew_supports}},
    .buffers = {g_size, g_write, g_read, g_copy, g_fill},
};

PSUP_KIT_ENTRIES(kit)

static const parity_plugin_api_t api = {
    .struct_size = sizeof(parity_plugin_api_t),
    .init = g_init,
    .shutdown = g_shutdown,
    .device_close = g_close,
    .buffer_alloc = g_alloc,
    .buffer_free = g_free,
    .synchronize = g_sync,
    PSUP_KIT_API_FIELDS,
};

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(gpu_template_identity, "template-gpu", "template-gpu", "0.1.0");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor, const parity_host_api_t *h,
                                                 parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, gpu_template_identity.name, gpu_template_identity.backend,
                              gpu_template_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  psup_kit_set_host(&kit, h);
  out->api = &api;
  return PARITY_STATUS_OK;
}
