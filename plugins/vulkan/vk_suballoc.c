/* vk_suballoc.c — small buffers share device memory. A device allows a limited number of live
 * memory allocations (maxMemoryAllocationCount: 4,096 on some drivers) and a model holds many
 * small tensors, so a buffer whose memory requirement is at most VKP_SUB_MAX bytes gets a slot of
 * a block instead of an allocation of its own: blocks of VKP_SUB_BLOCK bytes (vkp_memory_alloc:
 * counted, of a type the buffer allows) cut into equal power-of-two slots, one slot size per block,
 * a bit per slot. Each buffer keeps its own VkBuffer, bound at its slot's offset, so binding
 * windows and descriptors are unchanged. A block is freed when its last slot is.
 * PARITY_VULKAN_SUBALLOC=0 gives every buffer its own allocation again. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define VKP_SUB_MAX (256u * 1024u)         /* largest requirement served from a block */
#define VKP_SUB_BLOCK (4u * 1024u * 1024u) /* bytes per block */
#define VKP_SUB_MIN 256u                   /* smallest slot */

struct vkp_sub_block_t {
  VkDeviceMemory mem;
  uint32_t type;        /* memory type index */
  uint32_t slot, slots; /* slot size (a power of two) and count */
  uint32_t used;
  uint64_t bits[VKP_SUB_BLOCK / VKP_SUB_MIN / 64];
};

/* the slot a buffer with these requirements takes: a power of two, at least its size and alignment */
static uint32_t slot_size(const VkMemoryRequirements *req) {
  uint64_t need = req->size > req->alignment ? req->size : req->alignment;
  uint32_t s = VKP_SUB_MIN;
  while (s < need) s *= 2u;
  return s;
}

int vkp_sub_fits(const VkMemoryRequirements *req) {
  return vkp_knobs.suballoc && req->size <= VKP_SUB_MAX && req->alignment <= VKP_SUB_MAX &&
         (req->alignment & (req->alignment - 1)) == 0;
}

int32_t vkp_sub_alloc(parity_plugin_device_t *dev, const VkMemoryRequirements *req, vkp_sub_block_t **out_block,
                      uint32_t *out_slot, VkDeviceMemory *out_mem, uint64_t *out_off) {
  uint32_t slot = slot_size(req);
  vkp_sub_block_t *b = NULL;
  for (uint32_t i = 0; i < dev->nsub && !b; i++) {
    vkp_sub_block_t *c = dev->sub[i];
    if (c->slot == slot && c->used < c->slots && (req->memoryTypeBits >> c->type & 1u)) b = c;
  }
  if (!b) {
    vkp_sub_block_t **grown = realloc(dev->sub, (dev->nsub + 1) * sizeof *grown);
    if (!grown) return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
    dev->sub = grown;
    b = calloc(1, sizeof *b);
    if (!b) return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
    VkMemoryRequirements breq = *req;
    breq.size = VKP_SUB_BLOCK;
    int32_t st = vkp_memory_alloc(dev, &breq, 0, "buffer_alloc", &b->mem, &b->type);
    if (st != PARITY_STATUS_OK) {
      free(b);
      return st;
    }
    b->slot = slot;
    b->slots = VKP_SUB_BLOCK / slot;
    dev->sub[dev->nsub++] = b;
  }
  uint32_t w = 0;
  while (b->bits[w] == ~0ull) w++; /* a free slot exists: used < slots */
  uint32_t i = w * 64u + (uint32_t)__builtin_ctzll(~b->bits[w]);
  b->bits[w] |= 1ull << (i % 64);
  b->used++;
  *out_block = b;
  *out_slot = i;
  *out_mem = b->mem;
  *out_off = (uint64_t)i * b->slot;
  return PARITY_STATUS_OK;
}

void vkp_sub_free(parity_plugin_device_t *dev, vkp_sub_block_t *b, uint32_t slot) {
  b->bits[slot / 64] &= ~(1ull << (slot % 64));
  if (--b->used) return;
  for (uint32_t i = 0; i < dev->nsub; i++)
    if (dev->sub[i] == b) {
      dev->sub[i] = dev->sub[--dev->nsub];
      break;
    }
  vkp_memory_free(dev, b->mem);
  free(b);
}

void vkp_sub_destroy(parity_plugin_device_t *dev) {
  for (uint32_t i = 0; i < dev->nsub; i++) {
    vkp_memory_free(dev, dev->sub[i]->mem);
    free(dev->sub[i]);
  }
  free(dev->sub);
  dev->sub = NULL;
  dev->nsub = 0;
}
