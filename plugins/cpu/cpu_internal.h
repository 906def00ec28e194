/* cpu_internal.h — shared by the CPU plugin's files (and the test-only fault plugin that wraps
 * it). Each kernel family lives in its own file and exposes supports/forward/backward. */
#ifndef PARITY_CPU_INTERNAL_H
#define PARITY_CPU_INTERNAL_H

#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"

/* A CPU buffer is host memory, 64-byte aligned. */
struct parity_plugin_buffer_t {
  uint64_t size;
  unsigned char *data;
};

struct parity_plugin_device_t {
  uint32_t index;
};

/* The host services given at query time (NULL before). */
extern const parity_host_api_t *cpu_host;

/* Report `status` with a formatted message through the host; returns status. */
#define cpu_fail(status, ...) psup_report(cpu_host, (status), __VA_ARGS__)

/* Address of element 0 of a tensor view. */
static inline unsigned char *cpu_base(const parity_tensor_desc_t *t) {
  return t->buffer->data + t->offset_bytes;
}

/* Threads used for large f32 work; work is split in fixed-size blocks whose partial results
 * are combined in block order, so results never depend on the thread count. */
#define CPU_PARALLEL_MIN_ELEMENTS (1 << 16)

/* The function table shared by the real CPU plugin and wrappers of it. Descriptors reaching a
 * family's forward/backward have passed psup_check_op_desc, the extent check and that family's
 * supports(). supports() returns OK or reports UNSUPPORTED / INVALID_ARGUMENT with a message. */
const parity_plugin_api_t *cpu_plugin_api(void);
void cpu_set_host(const parity_host_api_t *host);

#define CPU_FAMILY(name)                                                                  \
  int32_t cpu_##name##_supports(const parity_op_desc_t *d);                               \
  int32_t cpu_##name##_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d);   \
  int32_t cpu_##name##_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
CPU_FAMILY(elementwise)
CPU_FAMILY(reduce)
CPU_FAMILY(matmul)
CPU_FAMILY(conv2d)
CPU_FAMILY(softmax)
#undef CPU_FAMILY

#endif
