/* device.h — the raw device API of libparity: device buffers, op descriptors (parity_plugin.h)
 * run directly on a device, supports() queries and the allocation hook. For tools, tests,
 * conformance and backend authors; an application needs only parity/parity.h. */
#ifndef PARITY_DEVICE_H
#define PARITY_DEVICE_H

#include "parity/parity.h"
#include "parity_plugin.h" /* the descriptors and buffer handles this API takes */

#ifdef __cplusplus
extern "C" {
#endif

/* Ask the plugin whether it can run `desc`; UNSUPPORTED comes with a message naming the
 * backend, op and dtype. */
PARITY_API parity_status_t parity_device_supports(parity_device_t *dev, const parity_op_desc_t *desc);

typedef struct parity_buffer_t parity_buffer_t;

PARITY_API parity_status_t parity_buffer_alloc(parity_device_t *dev, uint64_t size_bytes, parity_buffer_t **out_buf);
PARITY_API void parity_buffer_free(parity_buffer_t *buf);
PARITY_API uint64_t parity_buffer_size(const parity_buffer_t *buf);
/* The plugin handle, for filling parity_tensor_desc_t.buffer. */
PARITY_API parity_plugin_buffer_t *parity_buffer_handle(const parity_buffer_t *buf);
PARITY_API parity_status_t parity_buffer_write(parity_buffer_t *buf, uint64_t offset, const void *src, uint64_t size);
PARITY_API parity_status_t parity_buffer_read(parity_buffer_t *buf, uint64_t offset, void *dst, uint64_t size);
PARITY_API parity_status_t parity_buffer_copy(parity_buffer_t *src, uint64_t src_offset, parity_buffer_t *dst,
                                              uint64_t dst_offset, uint64_t size);
PARITY_API parity_status_t parity_buffer_fill(parity_buffer_t *buf, uint64_t offset, uint64_t size, const void *pattern,
                                              uint32_t pattern_size);

/* Validate `desc` (shapes, operand counts, buffers inside their allocations), ask supports(),
 * and enqueue the op on the device's queue. */
PARITY_API parity_status_t parity_device_run(parity_device_t *dev, const parity_op_desc_t *desc);

/* Counting hook for the device allocator: called with +size on every plugin buffer_alloc and
 * -size on every buffer_free made on behalf of this context. NULL removes it. */
typedef void (*parity_alloc_hook_fn)(void *user, int64_t delta_bytes);
PARITY_API void parity_context_set_alloc_hook(parity_context_t *ctx, parity_alloc_hook_fn hook, void *user);

#ifdef __cplusplus
}
#endif

#endif /* PARITY_DEVICE_H */
