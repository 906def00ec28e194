/* The CUresult -> parity status mapping, sticky errors and the poisoning of a context, and the
 * PTX-version message (plugins/cuda/cu_errors.c, compiled in without a driver). */
#include <criterion/criterion.h>
#include <string.h>

#include "cu_internal.h"

Test(cuda_errors, every_known_code_has_a_name_and_a_status) {
  for (int code = 0; code < 1000; code++) {
    const char *name = cu_result_name(code);
    int32_t st = cu_result_status(code);
    if (!name) {
      cr_expect_eq(st, PARITY_STATUS_DEVICE_ERROR, "unknown code %d maps to %d", code, st);
      cr_expect_not(cu_result_is_sticky(code), "unknown code %d is not sticky", code);
      continue;
    }
    cr_expect(strncmp(name, "CUDA_", 5) == 0, "%d: %s", code, name);
    cr_expect_eq(st == PARITY_STATUS_OK, code == 0, "%s maps to %d", name, st);
    cr_expect(st >= PARITY_STATUS_OK && st <= PARITY_STATUS_FAILED_PRECONDITION, "%s", name);
    if (cu_result_is_sticky(code)) cr_expect_eq(st, PARITY_STATUS_DEVICE_ERROR, "sticky %s", name);
  }
}

Test(cuda_errors, values_match_this_toolkits_cuda_h) {
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_STUB_LIBRARY), "CUDA_ERROR_STUB_LIBRARY");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_LAUNCH_FAILED), "CUDA_ERROR_LAUNCH_FAILED");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  cr_expect_str_eq(cu_result_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
}

Test(cuda_errors, statuses_say_what_the_caller_can_do) {
  cr_expect_eq(cu_result_status(CUDA_ERROR_OUT_OF_MEMORY), PARITY_STATUS_OUT_OF_MEMORY);
  cr_expect_eq(cu_result_status(CUDA_ERROR_NO_DEVICE), PARITY_STATUS_UNAVAILABLE);
  cr_expect_eq(cu_result_status(CUDA_ERROR_STUB_LIBRARY), PARITY_STATUS_UNAVAILABLE);
  cr_expect_eq(cu_result_status(35 /* CUDA_ERROR_INSUFFICIENT_DRIVER, gone from CUDA 13 headers */),
               PARITY_STATUS_UNAVAILABLE);
  cr_expect_eq(cu_result_status(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), PARITY_STATUS_UNAVAILABLE);
  cr_expect_eq(cu_result_status(CUDA_ERROR_NOT_SUPPORTED), PARITY_STATUS_UNSUPPORTED);
  cr_expect_eq(cu_result_status(CUDA_ERROR_INVALID_VALUE), PARITY_STATUS_INTERNAL);
  cr_expect_eq(cu_result_status(CUDA_ERROR_ILLEGAL_ADDRESS), PARITY_STATUS_DEVICE_ERROR);
  cr_expect_eq(cu_result_status(12345), PARITY_STATUS_DEVICE_ERROR);
}

Test(cuda_errors, sticky_errors_are_the_ones_that_corrupt_a_context) {
  const int sticky[] = {CUDA_ERROR_ILLEGAL_ADDRESS,       CUDA_ERROR_LAUNCH_FAILED,
                        CUDA_ERROR_MISALIGNED_ADDRESS,    CUDA_ERROR_ILLEGAL_INSTRUCTION,
                        CUDA_ERROR_HARDWARE_STACK_ERROR,  CUDA_ERROR_INVALID_PC,
                        CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_ASSERT,
                        CUDA_ERROR_LAUNCH_TIMEOUT,        CUDA_ERROR_ECC_UNCORRECTABLE};
  for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++)
    cr_expect(cu_result_is_sticky(sticky[i]), "%s", cu_result_name(sticky[i]));
  const int plain[] = {CUDA_SUCCESS,         CUDA_ERROR_OUT_OF_MEMORY,           CUDA_ERROR_INVALID_VALUE,
                       CUDA_ERROR_NOT_READY, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                       CUDA_ERROR_NO_DEVICE};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    cr_expect_not(cu_result_is_sticky(plain[i]), "%s", cu_result_name(plain[i]));
}

Test(cuda_errors, a_sticky_error_poisons_the_context_for_good) {
  cu_poison_t p = {0};
  cr_expect_not(cu_poison_note(&p, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync"));
  cr_expect_not(cu_poison_note(&p, CUDA_SUCCESS, "cuLaunchKernel"));
  cr_expect_eq(p.res, 0);
  cr_expect(cu_poison_note(&p, CUDA_ERROR_ILLEGAL_ADDRESS, "cuEventSynchronize"));
  /* later results, good or bad, keep it poisoned and keep the first cause */
  cr_expect(cu_poison_note(&p, CUDA_SUCCESS, "cuMemcpyDtoHAsync"));
  cr_expect(cu_poison_note(&p, CUDA_ERROR_LAUNCH_FAILED, "cuLaunchKernel"));
  cr_expect_eq(p.res, CUDA_ERROR_ILLEGAL_ADDRESS);
  char msg[512];
  cu_poison_message(&p, msg, sizeof msg, "Fake GPU (sm_90)");
  cr_expect(strstr(msg, "CUDA_ERROR_ILLEGAL_ADDRESS (700)") != NULL, "%s", msg);
  cr_expect(strstr(msg, "cuEventSynchronize") != NULL, "%s", msg);
  cr_expect(strstr(msg, "sticky") != NULL, "%s", msg);
  cr_expect(strstr(msg, "Fake GPU (sm_90)") != NULL, "%s", msg);
}

Test(cuda_errors, messages_name_the_call_the_code_and_what_was_done) {
  char msg[256];
  cu_result_message(msg, sizeof msg, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync", "4096 bytes");
  cr_expect_str_eq(msg, "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY (2) (4096 bytes)");
  cu_result_message(msg, sizeof msg, 4242, "cuInit", NULL);
  cr_expect_str_eq(msg, "cuInit: unknown CUDA error (4242)");
}

Test(cuda_errors, an_old_driver_gets_both_versions_not_a_bare_222) {
  const char *ptx = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_75\n.address_size 64\n";
  int maj, min;
  cr_assert(cu_ptx_isa_version(ptx, &maj, &min));
  cr_expect_eq(maj, 9);
  cr_expect_eq(min, 0);
  char msg[512];
  cu_ptx_version_message(msg, sizeof msg, 12020, 13000, ptx);
  cr_expect(strstr(msg, "CUDA 12.2") != NULL, "%s", msg);
  cr_expect(strstr(msg, "CUDA 13.0") != NULL, "%s", msg);
  cr_expect(strstr(msg, "PTX ISA 9.0") != NULL, "%s", msg);
  cr_expect(strstr(msg, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") != NULL, "%s", msg);
  cr_expect_not(cu_ptx_isa_version("no version here", &maj, &min));
}
