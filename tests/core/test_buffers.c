/* Buffers and the queue through the public API, on the CPU plugin. */
#include <string.h>

#include "test_util.h"

Test(buffers, write_read_copy_fill_roundtrip) {
  parity_device_t *dev = pt_device("cpu");
  parity_buffer_t *a, *b;
  cr_assert_eq(parity_buffer_alloc(dev, 64, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, 64, &b), PARITY_STATUS_OK);
  unsigned char src[64], dst[64];
  for (int i = 0; i < 64; i++) src[i] = (unsigned char)i;
  cr_assert_eq(parity_buffer_write(a, 0, src, 64), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_copy(a, 8, b, 0, 32), PARITY_STATUS_OK);
  uint32_t pat = 0xdeadbeef;
  cr_assert_eq(parity_buffer_fill(b, 32, 32, &pat, 4), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, dst, 64), PARITY_STATUS_OK);
  cr_assert_eq(memcmp(dst, src + 8, 32), 0);
  uint32_t got;
  memcpy(&got, dst + 60, 4);
  cr_assert_eq(got, pat);
  parity_buffer_free(a);
  parity_buffer_free(b);
}

Test(buffers, out_of_range_access_is_an_error_and_leaves_data_intact) {
  parity_device_t *dev = pt_device("cpu");
  parity_buffer_t *a;
  cr_assert_eq(parity_buffer_alloc(dev, 16, &a), PARITY_STATUS_OK);
  unsigned char src[32] = {1, 2, 3}, dst[16];
  cr_assert_eq(parity_buffer_write(a, 0, src, 16), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_write(a, 8, src, 16), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert(strstr(parity_last_error(), "outside the 16-byte buffer"), "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(a, 0, dst, 17), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert_eq(parity_buffer_read(a, 0, dst, 16), PARITY_STATUS_OK);
  cr_assert_eq(memcmp(dst, src, 16), 0);
  uint16_t pat = 7;
  cr_assert_eq(parity_buffer_fill(a, 0, 3, &pat, 2), PARITY_STATUS_INVALID_ARGUMENT);
  parity_buffer_free(a);
}

Test(buffers, run_rejects_an_operand_outside_its_buffer) {
  parity_device_t *dev = pt_device("cpu");
  int64_t shape[1] = {4};
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  pt_tensor y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  y.desc.offset_bytes = 4; /* last element would land past the end */
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  parity_status_t st = pt_run(dev, PARITY_OP_NEG, PARITY_DIRECTION_FORWARD, in, 1, out, 1, NULL);
  cr_assert_neq(st, PARITY_STATUS_OK);
  cr_assert(strlen(parity_last_error()) > 0);
  pt_tensor_free(&x);
  pt_tensor_free(&y);
}
