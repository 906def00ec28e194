/* fuzz_desc — descriptor validation (psup_check_op_desc), the operand contract
 * (psup_check_operands), byte extents and the iteration layout: any bytes become an op
 * descriptor with up to 6 tensor descriptors; nothing may crash, overflow or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parity_support/contract.h"
#include "parity_support/desc.h"
#include "parity_support/layout.h"

static const size_t TENSOR_BYTES = offsetof(parity_tensor_desc_t, buffer);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  parity_op_desc_t d;
  parity_tensor_desc_t t[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  memset(&d, 0, sizeof d);
  memset(t, 0, sizeof t);
  const size_t head = offsetof(parity_op_desc_t, inputs);
  if (size < head + 2) return 0;
  memcpy(&d, data, head);
  uint8_t present = data[head], buffers = data[head + 1];
  data += head + 2;
  size -= head + 2;
  size_t params = sizeof d.params < size ? sizeof d.params : size;
  memcpy(&d.params, data, params);
  data += params;
  size -= params;
  static uint8_t dummy[1];
  for (int i = 0; i < PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS; i++) {
    size_t n = TENSOR_BYTES < size ? TENSOR_BYTES : size;
    memcpy(&t[i], data, n);
    data += n;
    size -= n;
    t[i].buffer = (buffers >> (i % 8)) & 1 ? (parity_plugin_buffer_t *)dummy : NULL;
    t[i].offset_bytes = i * 8u;
  }
  for (int i = 0; i < PARITY_MAX_INPUTS; i++) d.inputs[i] = (present >> i) & 1 ? &t[i] : NULL;
  for (int i = 0; i < PARITY_MAX_OUTPUTS; i++)
    d.outputs[i] = (present >> (PARITY_MAX_INPUTS + i)) & 1 ? &t[PARITY_MAX_INPUTS + i] : NULL;
  char msg[512];
  for (int need = 0; need < 2; need++) {
    if (psup_check_op_desc(&d, need, msg, sizeof msg) != PARITY_STATUS_OK) continue;
    psup_caps_t caps = {.backend = "fuzz", .device = "fuzz", .dtype_mask = 0xfe};
    if (psup_check_operands(&d, &caps, msg, sizeof msg) != PARITY_STATUS_OK) continue;
    const parity_tensor_desc_t *ops[PSUP_LAYOUT_MAX_OPS] = {0};
    uint32_t nops = 0;
    for (uint32_t i = 0; i < d.num_inputs && nops < PSUP_LAYOUT_MAX_OPS; i++) ops[nops++] = d.inputs[i];
    for (uint32_t i = 0; i < d.num_outputs && nops < PSUP_LAYOUT_MAX_OPS; i++) ops[nops++] = d.outputs[i];
    if (!ops[0]) continue;
    for (uint32_t i = 0; i < nops; i++) { /* the layout is built over operands of one shape */
      if (ops[i] &&
          (ops[i]->rank != ops[0]->rank || memcmp(ops[i]->shape, ops[0]->shape, ops[0]->rank * sizeof(int64_t)) != 0))
        ops[i] = NULL;
    }
    psup_layout_t l;
    psup_layout_from_tensors(&l, nops, ops, need);
  }
  return 0;
}
