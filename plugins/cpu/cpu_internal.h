/* cpu_internal.h — shared by the CPU plugin's files (and the test-only fault plugin that wraps
 * it). Each kernel family lives in its own file and exposes forward/backward (and plan steps). */
#ifndef PARITY_CPU_INTERNAL_H
#define PARITY_CPU_INTERNAL_H

#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/operands.h"
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
static inline unsigned char *cpu_base(const parity_tensor_desc_t *t) { return t->buffer->data + t->offset_bytes; }

/* Threads used for large f32 work; work is split in fixed-size blocks whose partial results
 * are combined in block order, so results never depend on the thread count. */
#define CPU_PARALLEL_MIN_ELEMENTS (1 << 16)

/* The function table shared by the real CPU plugin and wrappers of it. Descriptors reaching a
 * family's forward/backward have passed psup_check_op_desc, the extent check and supports():
 * the operand contract (psup_check_operands on the CPU's caps) and the CPU plugin's own limits
 * (cpu_plugin.c). supports() returns OK or reports UNSUPPORTED / INVALID_ARGUMENT with a message. */
const parity_plugin_api_t *cpu_plugin_api(void);
void cpu_set_host(const parity_host_api_t *host);

/* The one family limit beyond the contract: OK when a row kernel exists for the elementwise op,
 * direction and dtype(s) of `d` (a descriptor the contract accepted), else UNSUPPORTED naming the
 * dtypes that have one. */
int32_t cpu_elementwise_supports(const parity_op_desc_t *d);

#define CPU_FAMILY(name)                                                                \
  int32_t cpu_##name##_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d); \
  int32_t cpu_##name##_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
CPU_FAMILY(elementwise)
CPU_FAMILY(reduce)
CPU_FAMILY(matmul)
CPU_FAMILY(conv2d)
CPU_FAMILY(softmax)
#undef CPU_FAMILY

/* A step of a prepared plan (cpu_plan.c): run(state) does what the family's kernel entry does
 * with the descriptor the step was prepared from, through the same kernels (so the same bits),
 * with everything derivable from the descriptor derived once. state is one malloc block, freed
 * with the plan. A family's prepare fills the step from a descriptor supports() accepted; it
 * may answer UNSUPPORTED (no message needed) to have the plan call the entry instead. */
typedef struct cpu_step_t {
  int32_t (*run)(const void *state);
  void *state;
} cpu_step_t;
/* The entries of a family whose file defines `static void derive(const parity_op_desc_t *,
 * T *)` (everything a launch needs from the descriptor) and `static int32_t launch(const void *)`
 * (run it): forward, backward and the plan step all derive, then launch. */
#define CPU_LAUNCH_ENTRIES(name, T)                                                                \
  int32_t cpu_##name##_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {           \
    (void)dev;                                                                                     \
    T l;                                                                                           \
    derive(d, &l);                                                                                 \
    return launch(&l);                                                                             \
  }                                                                                                \
  int32_t cpu_##name##_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {          \
    return cpu_##name##_forward(dev, d);                                                           \
  }                                                                                                \
  int32_t cpu_##name##_prepare(const parity_op_desc_t *d, cpu_step_t *step) {                      \
    T *l = malloc(sizeof *l);                                                                      \
    if (!l) return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: plan_prepare: out of host memory"); \
    derive(d, l);                                                                                  \
    step->run = launch;                                                                            \
    step->state = l;                                                                               \
    return PARITY_STATUS_OK;                                                                       \
  }
int32_t cpu_elementwise_prepare(const parity_op_desc_t *d, cpu_step_t *step);
int32_t cpu_reduce_prepare(const parity_op_desc_t *d, cpu_step_t *step);
int32_t cpu_matmul_prepare(const parity_op_desc_t *d, cpu_step_t *step);

/* The ABI 1.1 plan entries (cpu_plan.c). */
int32_t cpu_plan_prepare(parity_plugin_device_t *dev, const parity_plan_command_t *cmds, uint32_t count,
                         parity_plugin_plan_t **out);
int32_t cpu_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
void cpu_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);

#endif
