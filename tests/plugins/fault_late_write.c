/* fault_late_write.c — the write-reads-late fault (fault.h): buffer_write returns at once and the
 * copy runs later, from the caller's memory as it is then, when the next command reaches the queue
 * (a kernel, copy, fill, read, synchronize, plan run or buffer free). This is the bug of a GPU
 * plugin that enqueues an asynchronous copy straight from the caller's memory; the ABI says
 * buffer_write copies the host memory before returning (abi/parity_plugin.h), and parity-conform
 * holds plugins to it by scribbling over each write's source once the write returns
 * (tools/conform/exec.c). */
#include <stdlib.h>
#include <string.h>

#include "fault.h"

typedef struct {
  parity_plugin_device_t *dev;
  parity_plugin_buffer_t *buf;
  uint64_t off, size;
  const void *src;
} late_t;
#define LATE_MAX 64
static late_t late[LATE_MAX];
static unsigned nlate;
static parity_plugin_api_t inner; /* the table the fault wraps */

/* Run the writes held back, in order, from their sources as they are now. */
static int32_t late_run(void) {
  int32_t st = PARITY_STATUS_OK;
  for (unsigned i = 0; i < nlate; i++) {
    int32_t s = inner.buffer_write(late[i].dev, late[i].buf, late[i].off, late[i].src, late[i].size);
    if (st == PARITY_STATUS_OK) st = s;
  }
  nlate = 0;
  return st;
}

static int32_t late_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                          uint64_t size) {
  if (nlate == LATE_MAX) {
    int32_t st = late_run();
    if (st != PARITY_STATUS_OK) return st;
  }
  late[nlate++] = (late_t){dev, b, off, size, src};
  return PARITY_STATUS_OK;
}

static void late_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  late_run();
  inner.buffer_free(dev, b);
}
static int32_t late_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,
                         uint64_t size) {
  int32_t st = late_run();
  return st != PARITY_STATUS_OK ? st : inner.buffer_read(dev, b, off, dst, size);
}
static int32_t late_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t so,
                         parity_plugin_buffer_t *dst, uint64_t dof, uint64_t size) {
  int32_t st = late_run();
  return st != PARITY_STATUS_OK ? st : inner.buffer_copy(dev, src, so, dst, dof, size);
}
static int32_t late_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                         const void *pattern, uint32_t psize) {
  int32_t st = late_run();
  return st != PARITY_STATUS_OK ? st : inner.buffer_fill(dev, b, off, size, pattern, psize);
}
static int32_t late_sync(parity_plugin_device_t *dev) {
  int32_t st = late_run();
  return st != PARITY_STATUS_OK ? st : inner.synchronize(dev);
}
static int32_t late_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan) {
  int32_t st = late_run();
  return st != PARITY_STATUS_OK ? st : inner.plan_run(dev, plan);
}
#define LATE_KERNEL_(name)                                                             \
  static int32_t late_##name(parity_plugin_device_t *dev, const parity_op_desc_t *d) { \
    int32_t st = late_run();                                                           \
    return st != PARITY_STATUS_OK ? st : inner.name(dev, d);                           \
  }
LATE_KERNEL_(elementwise_forward)
LATE_KERNEL_(elementwise_backward)
LATE_KERNEL_(reduce_forward)
LATE_KERNEL_(reduce_backward)
LATE_KERNEL_(matmul_forward)
LATE_KERNEL_(matmul_backward)
LATE_KERNEL_(conv2d_forward)
LATE_KERNEL_(conv2d_backward)
LATE_KERNEL_(softmax_forward)
LATE_KERNEL_(softmax_backward)
#undef LATE_KERNEL_

void fault_late_write_install(parity_plugin_api_t *api) {
  inner = *api;
  api->buffer_write = late_write;
  api->buffer_free = late_free;
  api->buffer_read = late_read;
  api->buffer_copy = late_copy;
  api->buffer_fill = late_fill;
  api->synchronize = late_sync;
  if (api->plan_run) api->plan_run = late_plan_run;
  api->elementwise_forward = late_elementwise_forward;
  api->elementwise_backward = late_elementwise_backward;
  api->reduce_forward = late_reduce_forward;
  api->reduce_backward = late_reduce_backward;
  api->matmul_forward = late_matmul_forward;
  api->matmul_backward = late_matmul_backward;
  api->conv2d_forward = late_conv2d_forward;
  api->conv2d_backward = late_conv2d_backward;
  api->softmax_forward = late_softmax_forward;
  api->softmax_backward = late_softmax_backward;
}
