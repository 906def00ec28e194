/* vk_probe.c — what the device does, measured at open rather than trusted: whether fma() on
 * doubles rounds once. llvmpipe, for one, lowers it to a multiply and an add, which would break
 * every double-double step of the software math library; such devices get the emulated fma. */
#include <string.h>

#include "vk_internal.h"

int32_t vkp_probe(parity_plugin_device_t *dev) {
  dev->fused_fma64 = dev->fused_fma32 = 0;
  if (!dev->slot->has_f64) return PARITY_STATUS_OK;
  parity_plugin_buffer_t *b;
  int32_t st = vkp_buffer_alloc(dev, 32, &b);
  if (st != PARITY_STATUS_OK) return st;
  double io[4] = {1.0 + 0x1p-30, -1.0, 1.0 + 0x1p-12, -1.0};
  st = vkp_buffer_write(dev, b, 0, io, sizeof io);
  parity_tensor_desc_t t;
  int64_t shape[1] = {4};
  psup_tensor_init(&t, PARITY_DTYPE_F64, 1, shape, b, 0);
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = vkp_spv_find("probe_fma", NULL);
  l.local = 1;
  l.noperands = 1;
  l.operands[0] = (vkp_operand_t){&t, 1};
  l.groups[0] = l.groups[1] = l.groups[2] = 1;
  if (st == PARITY_STATUS_OK && l.spv < 0) st = PARITY_STATUS_INTERNAL;
  if (st == PARITY_STATUS_OK) st = vkp_dispatch(dev, &l);
  if (st == PARITY_STATUS_OK) st = vkp_buffer_read(dev, b, 0, io, sizeof io);
  vkp_buffer_free(dev, b);
  if (st != PARITY_STATUS_OK) return st;
  dev->fused_fma64 = io[1] == 0x1p-60;
  dev->fused_fma32 = io[3] == 0x1p-24;
  vkp_log(PARITY_LOG_DEBUG, "vulkan: %s: double fma is %s, float fma is %s", dev->slot->info.name,
          dev->fused_fma64 ? "fused" : "a multiply and an add (emulating a fused one)",
          dev->fused_fma32 ? "fused" : "a multiply and an add (exact products in double instead)");
  return PARITY_STATUS_OK;
}
