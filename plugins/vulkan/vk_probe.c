/* vk_probe.c — what the device does, measured at open rather than trusted: whether fma() rounds
 * once, on floats (every device: probe_fma32, no double) and on doubles (devices whose f64
 * kernels run: probe_fma). llvmpipe, for one, lowers both to a multiply and an add, which would
 * break every exact-product step of the math libraries; such devices get the emulated forms
 * (Veltkamp splitting in the float32 library, an emulated fma in the software double one). */
#include <string.h>

#include "vk_internal.h"

/* run probe variant `name` on the words io[0, n) (f32 or f64 elements) in place */
static int32_t run_probe(parity_plugin_device_t *dev, const char *name, int32_t dtype, void *io, size_t bytes) {
  parity_plugin_buffer_t *b;
  int32_t st = vkp_buffer_alloc(dev, bytes, &b);
  if (st != PARITY_STATUS_OK) return st;
  st = vkp_buffer_write(dev, b, 0, io, bytes);
  parity_tensor_desc_t t;
  int64_t shape[1] = {(int64_t)(bytes / psup_dtype_size(dtype))};
  psup_tensor_init(&t, dtype, 1, shape, b, 0);
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = vkp_spv_find(name, NULL);
  l.local = 1;
  l.noperands = 1;
  l.operands[0] = (vkp_operand_t){&t, 1};
  l.groups[0] = l.groups[1] = l.groups[2] = 1;
  if (st == PARITY_STATUS_OK && l.spv < 0) st = PARITY_STATUS_INTERNAL;
  if (st == PARITY_STATUS_OK) st = vkp_dispatch(dev, &l);
  if (st == PARITY_STATUS_OK) st = vkp_buffer_read(dev, b, 0, io, bytes);
  vkp_buffer_free(dev, b);
  return st;
}

int32_t vkp_probe(parity_plugin_device_t *dev) {
  dev->fused_fma64 = dev->fused_fma32 = 0;
  float f[2] = {1.0f + 0x1p-12f, -1.0f};
  int32_t st = run_probe(dev, "probe_fma32", PARITY_DTYPE_F32, f, sizeof f);
  if (st != PARITY_STATUS_OK) return st;
  dev->fused_fma32 = f[1] == 0x1p-24f;
  if (dev->slot->has_f64) {
    double io[4] = {1.0 + 0x1p-30, -1.0, 1.0 + 0x1p-12, -1.0};
    st = run_probe(dev, "probe_fma", PARITY_DTYPE_F64, io, sizeof io);
    if (st != PARITY_STATUS_OK) return st;
    dev->fused_fma64 = io[1] == 0x1p-60;
  }
  vkp_log(PARITY_LOG_DEBUG, "%s: float fma is %s; double fma is %s", dev->slot->kit.info.name,
          dev->fused_fma32 ? "fused" : "a multiply and an add (exact products by Veltkamp splitting)",
          !dev->slot->has_f64 ? "not used (no f64 kernels)"
          : dev->fused_fma64  ? "fused"
                              : "a multiply and an add (emulating a fused one)");
  return PARITY_STATUS_OK;
}
