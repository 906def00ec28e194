/* cpu_plugin.c — the CPU plugin's function table: lifecycle, device info, validation and
 * dispatch to the kernel family files. Memory and queue live in cpu_memory.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "cpu_isa.h"
#include "cpu_parallel.h"
#include "gemm.h"
#include "parity_support/contract.h"

const parity_host_api_t *cpu_host;

void cpu_set_host(const parity_host_api_t *host) { cpu_host = host; }

static int32_t cpu_init(void) {
  cpu_parallel_init();
  return cpu_isa_init();
}
static void cpu_shutdown(void) { gemm_ws_release(); }

/* Every dtype: the device info's dtype_mask and the operand contract's caps. */
#define CPU_DTYPE_MASK                                                                                             \
  (PARITY_DTYPE_BIT(PARITY_DTYPE_F32) | PARITY_DTYPE_BIT(PARITY_DTYPE_F64) | PARITY_DTYPE_BIT(PARITY_DTYPE_F16) |  \
   PARITY_DTYPE_BIT(PARITY_DTYPE_BF16) | PARITY_DTYPE_BIT(PARITY_DTYPE_I32) | PARITY_DTYPE_BIT(PARITY_DTYPE_I64) | \
   PARITY_DTYPE_BIT(PARITY_DTYPE_BOOL))

static int32_t cpu_get_device_count(uint32_t *out_count) {
  *out_count = 1;
  return PARITY_STATUS_OK;
}

static void cpu_model_name(char *out, size_t n) {
  snprintf(out, n, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *v = strchr(line, ':');
    if (!v) break;
    v++;
    while (*v == ' ') v++;
    snprintf(out, n, "%.*s", (int)strcspn(v, "\n"), v);
    break;
  }
  fclose(f);
}

static int32_t cpu_get_device_info(uint32_t index, parity_device_info_t *out) {
  if (index != 0) return cpu_fail(PARITY_STATUS_OUT_OF_RANGE, "cpu: device %u does not exist (1 device)", index);
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.type = PARITY_DEVICE_TYPE_CPU;
  char model[96];
  cpu_model_name(model, sizeof model);
  snprintf(info.name, sizeof info.name, "%s (%ld threads)", model, sysconf(_SC_NPROCESSORS_ONLN));
  snprintf(info.driver, sizeof info.driver, "parity cpu plugin %u.%u, %s kernels", PARITY_ABI_MAJOR, PARITY_ABI_MINOR,
           cpu_isa_name(cpu_isa_active()));
  uint64_t mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  info.memory_bytes = mem;
  info.max_buffer_bytes = mem;
  info.dtype_mask = CPU_DTYPE_MASK;
  /* supports() refuses by dtype alone for libparity's own descriptors (their shapes are right) */
  info.flags = PARITY_DEVICE_FLAG_FLOAT64 | PARITY_DEVICE_FLAG_DETERMINISTIC | PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS;
  info.denormals = PARITY_DENORMALS_PRESERVED;
  snprintf(info.math, sizeof info.math, "f32 f16 bf16: C libm in float, own exp, tanh, sigmoid, gelu; f64: C libm");
  /* write only what the host's struct has room for */
  uint32_t size = out->struct_size < sizeof info ? out->struct_size : (uint32_t)sizeof info;
  info.struct_size = size;
  memcpy(out, &info, size);
  return PARITY_STATUS_OK;
}

static struct parity_plugin_device_t the_device = {0};

static int32_t cpu_device_open(uint32_t index, parity_plugin_device_t **out_dev) {
  if (index != 0) return cpu_fail(PARITY_STATUS_OUT_OF_RANGE, "cpu: device %u does not exist (1 device)", index);
  *out_dev = &the_device;
  return PARITY_STATUS_OK;
}

static void cpu_device_close(parity_plugin_device_t *dev) { (void)dev; }

/* memory and queue: cpu_memory.c */
int32_t cpu_buffer_alloc(parity_plugin_device_t *, uint64_t, parity_plugin_buffer_t **);
void cpu_buffer_free(parity_plugin_device_t *, parity_plugin_buffer_t *);
int32_t cpu_buffer_write(parity_plugin_device_t *, parity_plugin_buffer_t *, uint64_t, const void *, uint64_t);
int32_t cpu_buffer_read(parity_plugin_device_t *, parity_plugin_buffer_t *, uint64_t, void *, uint64_t);
int32_t cpu_buffer_copy(parity_plugin_device_t *, parity_plugin_buffer_t *, uint64_t, parity_plugin_buffer_t *,
                        uint64_t, uint64_t);
int32_t cpu_buffer_fill(parity_plugin_device_t *, parity_plugin_buffer_t *, uint64_t, uint64_t, const void *, uint32_t);
int32_t cpu_synchronize(parity_plugin_device_t *);

/* The reduce and softmax kernels address elements through typed pointers from offset_bytes. */
static int32_t check_aligned(const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < count; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (t && t->offset_bytes % psup_dtype_size(t->dtype) != 0)
        return cpu_fail(PARITY_STATUS_UNSUPPORTED,
                        "cpu: %s %s: %s %u starts at byte offset %llu, not a multiple "
                        "of its %u-byte element",
                        psup_op_name(d->op), psup_direction_name(d->direction), pass ? "output" : "input", i,
                        (unsigned long long)t->offset_bytes, psup_dtype_size(t->dtype));
    }
  }
  return PARITY_STATUS_OK;
}

static const psup_caps_t cpu_caps = {.backend = "cpu", .device = "the CPU plugin", .dtype_mask = CPU_DTYPE_MASK};

/* The operand contract (parity_support/contract.h: dtypes, shapes, axes, conv/pool geometry) on
 * the CPU's caps, then only what is the CPU plugin's own: a row kernel for the elementwise op and
 * dtype pair, element-aligned operands for reduce and softmax. Matmul, conv2d and pooling have a
 * kernel for every dtype the contract lets them take. */
static int32_t cpu_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  char msg[512];
  int32_t st = psup_check_operands(d, &cpu_caps, msg, sizeof msg); /* the host checked the structure */
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "%s", msg);
  switch (psup_kind_family(psup_op_info(d->op)->kind)) {
    case PARITY_FAMILY_ELEMENTWISE: return cpu_elementwise_supports(d);
    case PARITY_FAMILY_REDUCE:
    case PARITY_FAMILY_SOFTMAX: return check_aligned(d);
    default: return PARITY_STATUS_OK;
  }
}

/* Kernel entries check only what is cheap (the host validated the descriptor and asked
 * supports() first: parity_plugin.h). */
static int32_t validate(const parity_op_desc_t *d, int32_t family, int32_t direction) {
  char msg[512];
  int32_t st = psup_check_kernel_entry(d, family, direction, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "cpu: %s", msg);
  return PARITY_STATUS_OK;
}

#define CPU_ENTRY(name, FAMILY, dir, DIR)                                                       \
  static int32_t entry_##name##_##dir(parity_plugin_device_t *dev, const parity_op_desc_t *d) { \
    int32_t st = validate(d, PARITY_FAMILY_##FAMILY, PARITY_DIRECTION_##DIR);                   \
    return st != PARITY_STATUS_OK ? st : cpu_##name##_##dir(dev, d);                            \
  }
// clang-format off
#define CPU_ENTRIES(name, FAMILY)                                   \
  CPU_ENTRY(name, FAMILY, forward, FORWARD)                         \
  CPU_ENTRY(name, FAMILY, backward, BACKWARD)
// clang-format on
CPU_ENTRIES(elementwise, ELEMENTWISE)
CPU_ENTRIES(reduce, REDUCE)
CPU_ENTRIES(matmul, MATMUL)
CPU_ENTRIES(conv2d, CONV2D)
CPU_ENTRIES(softmax, SOFTMAX)

static const parity_plugin_api_t cpu_api = {
    .struct_size = sizeof(parity_plugin_api_t),
    .init = cpu_init,
    .shutdown = cpu_shutdown,
    .get_device_count = cpu_get_device_count,
    .get_device_info = cpu_get_device_info,
    .device_open = cpu_device_open,
    .device_close = cpu_device_close,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_write = cpu_buffer_write,
    .buffer_read = cpu_buffer_read,
    .buffer_copy = cpu_buffer_copy,
    .buffer_fill = cpu_buffer_fill,
    .synchronize = cpu_synchronize,
    .supports = cpu_supports,
    .elementwise_forward = entry_elementwise_forward,
    .elementwise_backward = entry_elementwise_backward,
    .reduce_forward = entry_reduce_forward,
    .reduce_backward = entry_reduce_backward,
    .matmul_forward = entry_matmul_forward,
    .matmul_backward = entry_matmul_backward,
    .conv2d_forward = entry_conv2d_forward,
    .conv2d_backward = entry_conv2d_backward,
    .softmax_forward = entry_softmax_forward,
    .softmax_backward = entry_softmax_backward,
    .plan_prepare = cpu_plan_prepare,
    .plan_run = cpu_plan_run,
    .plan_release = cpu_plan_release,
};

const parity_plugin_api_t *cpu_plugin_api(void) { return &cpu_api; }
