/* template_plugin.c — the smallest honest parity backend: host memory, one device, f32 add, sub,
 * mul and cast forward, add/sub/mul backward, and sum forward and backward. Everything else is
 * refused by supports() and shows as unsupported in parity-conform. Copy it, rename it, replace the
 * loops with your device's calls. The operand contract (shapes, dtypes, parameters of every op
 * kind) is checked by the host before supports() and every entry; psup_check_operands checks a
 * descriptor against this backend's capabilities. */
#include <stdlib.h>
#include <string.h>

#include "parity_plugin.h"
#include "parity_support/contract.h"
#include "parity_support/desc.h"
#include "parity_support/negotiate.h"
#include "parity_support/ops.h"

static const parity_host_api_t *host;
#define fail(st, ...) psup_report(host, (st), __VA_ARGS__)

struct parity_plugin_buffer_t {
  unsigned char *data;
  uint64_t size;
};
struct parity_plugin_device_t {
  int unused;
};
static struct parity_plugin_device_t the_device;

/* ---- lifecycle and devices ------------------------------------------------------------------- */
static int32_t t_init(void) { return PARITY_STATUS_OK; }
static void t_shutdown(void) {}
static int32_t t_count(uint32_t *n) {
  *n = 1;
  return PARITY_STATUS_OK;
}
static int32_t t_info(uint32_t index, parity_device_info_t *out) {
  if (index != 0) return fail(PARITY_STATUS_OUT_OF_RANGE, "template: device %u does not exist (1 device)", index);
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.type = PARITY_DEVICE_TYPE_OTHER; /* `auto` prefers GPUs, then the CPU plugin: name it to use it */
  strcpy(info.name, "template device (host memory)");
  strcpy(info.driver, "parity plugin template");
  info.memory_bytes = info.max_buffer_bytes = 1ull << 30;
  info.dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32); /* claim only what supports() accepts */
  info.flags = PARITY_DEVICE_FLAG_DETERMINISTIC;
  info.denormals = PARITY_DENORMALS_PRESERVED;
  uint32_t n = out->struct_size < sizeof info ? out->struct_size : (uint32_t)sizeof info;
  info.struct_size = n;
  memcpy(out, &info, n);
  return PARITY_STATUS_OK;
}
static int32_t t_open(uint32_t index, parity_plugin_device_t **out) {
  if (index != 0) return fail(PARITY_STATUS_OUT_OF_RANGE, "template: device %u does not exist", index);
  *out = &the_device;
  return PARITY_STATUS_OK;
}
static void t_close(parity_plugin_device_t *d) { (void)d; }

/* ---- memory (the queue is synchronous here) --------------------------------------------------- */
static int32_t t_alloc(parity_plugin_device_t *d, uint64_t size, parity_plugin_buffer_t **out) {
  (void)d;
  parity_plugin_buffer_t *b = calloc(1, sizeof *b);
  if (b) b->data = calloc(1, size ? size : 1);
  if (!b || !b->data) {
    free(b);
    return fail(PARITY_STATUS_OUT_OF_MEMORY, "template: cannot allocate %llu bytes", (unsigned long long)size);
  }
  b->size = size;
  *out = b;
  return PARITY_STATUS_OK;
}
static void t_free(parity_plugin_device_t *d, parity_plugin_buffer_t *b) {
  (void)d;
  if (b) free(b->data);
  free(b);
}
static int32_t in_range(const parity_plugin_buffer_t *b, uint64_t off, uint64_t n, const char *what) {
  if (!b || off > b->size || n > b->size - off)
    return fail(PARITY_STATUS_OUT_OF_RANGE, "template: %s: range [%llu, +%llu) outside the buffer", what,
                (unsigned long long)off, (unsigned long long)n);
  return PARITY_STATUS_OK;
}
static int32_t t_write(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                       uint64_t n) {
  (void)d;
  int32_t st = in_range(b, off, n, "buffer_write");
  if (st == PARITY_STATUS_OK && n) memcpy(b->data + off, src, n);
  return st;
}
static int32_t t_read(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t n) {
  (void)d;
  int32_t st = in_range(b, off, n, "buffer_read");
  if (st == PARITY_STATUS_OK && n) memcpy(dst, b->data + off, n);
  return st;
}
static int32_t t_copy(parity_plugin_device_t *d, parity_plugin_buffer_t *s, uint64_t so, parity_plugin_buffer_t *t,
                      uint64_t to, uint64_t n) {
  (void)d;
  int32_t st = in_range(s, so, n, "buffer_copy");
  if (st == PARITY_STATUS_OK) st = in_range(t, to, n, "buffer_copy");
  if (st == PARITY_STATUS_OK && n) memmove(t->data + to, s->data + so, n);
  return st;
}
static int32_t t_fill(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t off, uint64_t n, const void *p,
                      uint32_t ps) {
  (void)d;
  int32_t st = in_range(b, off, n, "buffer_fill");
  if (st != PARITY_STATUS_OK) return st;
  if (!p || (ps != 1 && ps != 2 && ps != 4 && ps != 8) || n % ps)
    return fail(PARITY_STATUS_INVALID_ARGUMENT, "template: buffer_fill: bad pattern size %u", ps);
  for (uint64_t i = 0; i < n; i += ps) memcpy(b->data + off + i, p, ps);
  return PARITY_STATUS_OK;
}
static int32_t t_sync(parity_plugin_device_t *d) {
  (void)d;
  return PARITY_STATUS_OK;
}

/* ---- what this backend runs ------------------------------------------------------------------- */
static const psup_caps_t caps = {
    .backend = "template", .device = "template device", .dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32)};

static int32_t t_supports(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  (void)d;
  char msg[512];
  int32_t st = psup_check_operands(desc, &caps, msg, sizeof msg); /* the host checked the contract */
  if (st != PARITY_STATUS_OK) return fail(st, "%s", msg);
  int op = desc->op, fwd = desc->direction == PARITY_DIRECTION_FORWARD;
  int ok = op == PARITY_OP_ADD || op == PARITY_OP_SUB || op == PARITY_OP_MUL || op == PARITY_OP_SUM ||
           (op == PARITY_OP_CAST && fwd);
  if (!ok)
    return fail(PARITY_STATUS_UNSUPPORTED, "template: %s %s is not implemented", psup_op_name(op),
                psup_direction_name(desc->direction));
  for (uint32_t i = 0; i < desc->num_inputs + desc->num_outputs; i++) {
    const parity_tensor_desc_t *t = i < desc->num_inputs ? desc->inputs[i] : desc->outputs[i - desc->num_inputs];
    if (t && t->offset_bytes % 4)
      return fail(PARITY_STATUS_UNSUPPORTED, "template: operand at byte offset %llu is not 4-byte aligned",
                  (unsigned long long)t->offset_bytes);
  }
  return PARITY_STATUS_OK;
}

/* The host validated the descriptor and asked t_supports() before calling an entry
 * (parity_plugin.h), so an entry checks only what is cheap. */
static int32_t validate(parity_plugin_device_t *d, const parity_op_desc_t *desc, int32_t family, int32_t dir) {
  (void)d;
  char msg[512];
  int32_t st = psup_check_kernel_entry(desc, family, dir, msg, sizeof msg);
  return st != PARITY_STATUS_OK ? fail(st, "%s", msg) : PARITY_STATUS_OK;
}

static float *at(const parity_tensor_desc_t *t, int64_t elem) {
  return (float *)(t->buffer->data + t->offset_bytes) + elem;
}

/* ---- kernels ----------------------------------------------------------------------------------- */
/* One element of each kind, operands in the contract's order (parity_plugin.h, "OPERANDS"): the
 * inputs, then the outputs; v[] holds their values, out[] receives the outputs'. */
static void unary_element(int32_t op, int fwd, const float *v, float *out) {
  /* forward {x} -> {y}; backward {x, y, dy} -> {dx}. No unary op is implemented yet: add one here
   * and in t_supports (README.md, "Adding an op"). */
  (void)op, (void)fwd, (void)v, (void)out;
}

static void binary_element(int32_t op, int fwd, const float *v, float *out) {
  float a = v[0], b = v[1];
  if (fwd) { /* {a, b} -> {c} */
    out[0] = op == PARITY_OP_ADD ? a + b : op == PARITY_OP_SUB ? a - b : a * b;
    return;
  }
  float g = v[3]; /* {a, b, c, dc} -> {da, db} */
  out[0] = op == PARITY_OP_MUL ? g * b : g;
  out[1] = op == PARITY_OP_MUL ? g * a : op == PARITY_OP_SUB ? -g : g;
}

static int32_t t_elementwise(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  int fwd = desc->direction == PARITY_DIRECTION_FORWARD;
  int32_t st = validate(d, desc, PARITY_FAMILY_ELEMENTWISE, desc->direction);
  if (st != PARITY_STATUS_OK) return st;
  const psup_op_info_t *info = psup_op_info(desc->op);
  uint32_t nin = desc->num_inputs, nout = desc->num_outputs;
  /* every operand has the iteration shape: the forward output's, or in backward the gradient's
   * (the last input of every elementwise kind) */
  const parity_tensor_desc_t *ref = fwd ? desc->outputs[0] : desc->inputs[nin - 1];
  const parity_tensor_desc_t *ops[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS] = {0};
  for (uint32_t i = 0; i < nin; i++) ops[i] = desc->inputs[i];
  for (uint32_t i = 0; i < nout; i++) ops[nin + i] = desc->outputs[i]; /* NULL: not needed */
  const int64_t *strides[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  int64_t zero[PARITY_MAX_RANK] = {0};
  for (uint32_t i = 0; i < nin + nout; i++) strides[i] = ops[i] ? ops[i]->strides : zero;
  psup_iter_t it;
  psup_iter_init(&it, ref->rank, ref->shape, nin + nout, strides);
  int64_t total = psup_numel(ref);
  for (int64_t e = 0; e < total; e++, psup_iter_next(&it)) {
    float v[PARITY_MAX_INPUTS], out[PARITY_MAX_OUTPUTS] = {0};
    for (uint32_t i = 0; i < nin; i++) v[i] = *at(ops[i], it.off[i]);
    if (info->kind == PARITY_OP_KIND_CAST)
      out[0] = v[0]; /* f32 -> f32: the core's copy */
    else if (info->kind == PARITY_OP_KIND_UNARY)
      unary_element(desc->op, fwd, v, out);
    else
      binary_element(desc->op, fwd, v, out);
    for (uint32_t i = 0; i < nout; i++)
      if (ops[nin + i]) *at(ops[nin + i], it.off[nin + i]) = out[i];
  }
  return PARITY_STATUS_OK;
}

/* The output element that element (index) of x reduces into, for a reduce over `axes`. */
static int64_t reduced_offset(const parity_tensor_desc_t *x, const parity_tensor_desc_t *y, uint32_t axes,
                              const int64_t *index) {
  int64_t off = 0;
  for (uint32_t a = 0; a < x->rank; a++)
    if (!((axes >> a) & 1u)) off += index[a] * y->strides[a];
  return off;
}

static int32_t t_reduce(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  int32_t st = validate(d, desc, PARITY_FAMILY_REDUCE, desc->direction);
  if (st != PARITY_STATUS_OK) return st;
  const parity_tensor_desc_t *x = desc->inputs[0];
  uint32_t axes = desc->params.reduce.axes_mask;
  int fwd = desc->direction == PARITY_DIRECTION_FORWARD;
  const parity_tensor_desc_t *y = fwd ? desc->outputs[0] : desc->inputs[1];
  const parity_tensor_desc_t *dy = fwd ? NULL : desc->inputs[2], *dx = fwd ? NULL : desc->outputs[0];
  int64_t ny = psup_numel(y), nx = psup_numel(x);
  if (fwd) {
    /* accumulate in double, round once: well inside the conformance bound for any order */
    double *acc = calloc((size_t)(ny ? ny : 1), sizeof *acc);
    int *neg0 = malloc(sizeof(int) * (size_t)(ny ? ny : 1)); /* a sum of only -0 is -0 */
    if (!acc || !neg0) {
      free(acc);
      free(neg0);
      return fail(PARITY_STATUS_OUT_OF_MEMORY, "template: sum: out of host memory");
    }
    for (int64_t i = 0; i < ny; i++) neg0[i] = 1;
    const int64_t *s[1] = {x->strides};
    psup_iter_t it;
    psup_iter_init(&it, x->rank, x->shape, 1, s);
    int64_t ydense[PARITY_MAX_RANK]; /* y as a dense row-major index space, for acc[] */
    for (int32_t a = (int32_t)y->rank - 1, m = 1; a >= 0; m *= (int)y->shape[a], a--) ydense[a] = m;
    parity_tensor_desc_t yd = *y;
    memcpy(yd.strides, ydense, sizeof ydense);
    for (int64_t e = 0; e < nx; e++, psup_iter_next(&it)) {
      int64_t k = reduced_offset(x, &yd, axes, it.idx);
      float v = *at(x, it.off[0]);
      acc[k] += v;
      if (!(v == 0 && 1 / v < 0)) neg0[k] = 0;
    }
    const int64_t *ys[1] = {y->strides};
    psup_iter_init(&it, y->rank, y->shape, 1, ys);
    for (int64_t k = 0; k < ny; k++, psup_iter_next(&it)) *at(y, it.off[0]) = neg0[k] && nx ? -0.0f : (float)acc[k];
    free(acc);
    free(neg0);
    return PARITY_STATUS_OK;
  }
  if (!dx) return PARITY_STATUS_OK;
  const int64_t *s[2] = {x->strides, dx->strides};
  psup_iter_t it;
  psup_iter_init(&it, x->rank, x->shape, 2, s);
  for (int64_t e = 0; e < nx; e++, psup_iter_next(&it))
    *at(dx, it.off[1]) = *at(dy, reduced_offset(x, dy, axes, it.idx));
  return PARITY_STATUS_OK;
}

static const parity_plugin_api_t api = {
    .struct_size = sizeof(parity_plugin_api_t),
    .init = t_init,
    .shutdown = t_shutdown,
    .get_device_count = t_count,
    .get_device_info = t_info,
    .device_open = t_open,
    .device_close = t_close,
    .buffer_alloc = t_alloc,
    .buffer_free = t_free,
    .buffer_write = t_write,
    .buffer_read = t_read,
    .buffer_copy = t_copy,
    .buffer_fill = t_fill,
    .synchronize = t_sync,
    .supports = t_supports,
    .elementwise_forward = t_elementwise,
    .elementwise_backward = t_elementwise,
    .reduce_forward = t_reduce,
    .reduce_backward = t_reduce,
};

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(template_identity, "template", "template", "0.1.0");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor, const parity_host_api_t *h,
                                                 parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st =
      psup_negotiate(host_major, out, template_identity.name, template_identity.backend, template_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  host = h;
  out->api = &api;
  return PARITY_STATUS_OK;
}
