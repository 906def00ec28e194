/* vk_ref.h — the raw Vulkan reference of the prepared section's per-op figure on a Vulkan device:
 * the same 2-element add dispatched straight through the Vulkan API with a minimal compute pipeline
 * (tools/bench/vk_ref.comp, compiled by the build's glslc), on the physical device of the same
 * name, loaded with dlopen (libvulkan.so.1, the loader the Vulkan plugin uses). Each launch records
 * its command buffer (bind the pipeline and the descriptor set, push the element count, dispatch),
 * submits it with a fence and waits for it: what the driver alone costs per op. */
#ifndef PARITY_BENCH_VK_REF_H
#define PARITY_BENCH_VK_REF_H

#include <stddef.h>

typedef struct vk_ref vk_ref;
/* Ready to launch on the Vulkan device named `device_name`; NULL with why filled when Vulkan or
 * that device is unavailable (reported, never an error). */
vk_ref *vk_ref_create(const char *device_name, char *why, size_t whylen);
/* `launches` adds, each one submission waited for: 0 when every call succeeded. */
int vk_ref_run(vk_ref *r, int launches);
void vk_ref_destroy(vk_ref *r);

#endif
