/* The Vulkan plugin's VkResult table (plugins/vulkan/vk_errors.c, compiled into this test): every
 * result Vulkan 1.3 defines has its name and a status; unknown codes still get a status. */
#include <criterion/criterion.h>

#include "../../plugins/vulkan/vk_errors.c"

/* vk_errors.c reports through the plugin's kit: here one whose host keeps the last message */
static char last[512];
static void keep(void *data, int32_t status, const char *message) {
  (void)data, (void)status;
  snprintf(last, sizeof last, "%s", message);
}
static const parity_host_api_t host = {.struct_size = sizeof host, .report_error = keep};
psup_kit_t vkp_kit = {.backend = "vulkan", .host = &host};

Test(vk_errors, every_vkresult_has_its_name_and_a_status) {
  const VkResult codes[] = {VK_NOT_READY,
                            VK_TIMEOUT,
                            VK_INCOMPLETE,
                            VK_ERROR_OUT_OF_HOST_MEMORY,
                            VK_ERROR_OUT_OF_DEVICE_MEMORY,
                            VK_ERROR_INITIALIZATION_FAILED,
                            VK_ERROR_DEVICE_LOST,
                            VK_ERROR_MEMORY_MAP_FAILED,
                            VK_ERROR_LAYER_NOT_PRESENT,
                            VK_ERROR_EXTENSION_NOT_PRESENT,
                            VK_ERROR_FEATURE_NOT_PRESENT,
                            VK_ERROR_INCOMPATIBLE_DRIVER,
                            VK_ERROR_TOO_MANY_OBJECTS,
                            VK_ERROR_FORMAT_NOT_SUPPORTED,
                            VK_ERROR_FRAGMENTED_POOL,
                            VK_ERROR_UNKNOWN,
                            VK_ERROR_OUT_OF_POOL_MEMORY,
                            VK_ERROR_INVALID_EXTERNAL_HANDLE,
                            VK_ERROR_FRAGMENTATION,
                            VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS,
                            VK_PIPELINE_COMPILE_REQUIRED,
                            VK_ERROR_VALIDATION_FAILED_EXT};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    cr_assert_not_null(vkp_result_name(codes[i]), "VkResult %d has no name", (int)codes[i]);
    cr_assert_neq(vkp_result_status(codes[i]), PARITY_STATUS_OK, "VkResult %d maps to OK", (int)codes[i]);
  }
  cr_assert_str_eq(vkp_result_name(VK_ERROR_OUT_OF_DEVICE_MEMORY), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
  cr_assert_eq(vkp_result_status(VK_ERROR_OUT_OF_DEVICE_MEMORY), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert_eq(vkp_result_status(VK_ERROR_DEVICE_LOST), PARITY_STATUS_DEVICE_ERROR);
  cr_assert_eq(vkp_result_status(VK_ERROR_INCOMPATIBLE_DRIVER), PARITY_STATUS_UNAVAILABLE);
  cr_assert_eq(vkp_result_status(VK_SUCCESS), PARITY_STATUS_OK);
  cr_assert_null(vkp_result_name((VkResult)-123456));
  cr_assert_eq(vkp_result_status((VkResult)-123456), PARITY_STATUS_DEVICE_ERROR);
}

Test(vk_errors, a_failure_message_names_the_call_and_the_result) {
  cr_assert_eq(vkp_vk_fail(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", "64 bytes"), PARITY_STATUS_OUT_OF_MEMORY);
  cr_expect_str_eq(last, "vulkan: vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY (64 bytes)");
  cr_assert_eq(vkp_vk_fail((VkResult)-77, "vkQueueSubmit", ""), PARITY_STATUS_DEVICE_ERROR);
  cr_expect_str_eq(last, "vulkan: vkQueueSubmit: unknown VkResult -77"); /* the prefix once, no empty "()" */
}

/* GPU-assisted validation's report of conv2d reading outside x (the mutant vk-conv-fwd-unmasked-load),
 * as the layer (1.3.239) wrote it: what matters sits after the object list and is cut off by a
 * case report's width unless the plugin shortens it */
Test(vk_errors, a_validation_message_keeps_the_access_the_kernel_and_the_invocation) {
  const char *m =
      "Validation Error: [ VUID-vkCmdDispatch-None-02706 ] Object 0: handle = 0x55b5ba1e9e08, type = "
      "VK_OBJECT_TYPE_QUEUE; | MessageID = 0x9d0dde06 | Descriptor index 0 access out of bounds. Descriptor size is "
      "1856 and highest byte accessed was 4294967259 Command buffer (0x55b5ba59d2e0). Compute Dispatch Index 0. "
      "Pipeline (conv_fwd_f32)(0x380000000038). Shader Module (conv_fwd_f32)(0x370000000037). Shader Instruction "
      "Index = 1491.  Stage = Compute.  Global invocation ID (x, y, z) = (0, 0, 0 ) The Vulkan spec states: If the "
      "robustBufferAccess feature is not enabled, and if the VkPipeline object bound to the pipeline bind point ...";
  char out[1024];
  vkp_condense_validation("VUID-vkCmdDispatch-None-02706", m, out, sizeof out);
  cr_expect_str_eq(out,
                   "VUID-vkCmdDispatch-None-02706: Descriptor index 0 access out of bounds. Descriptor size is "
                   "1856 and highest byte accessed was 4294967259 Command buffer. Compute Dispatch Index 0. "
                   "Pipeline (conv_fwd_f32). Shader Module (conv_fwd_f32). Shader Instruction Index = 1491. "
                   "Stage = Compute. Global invocation ID (x, y, z) = (0, 0, 0 )");
  /* short enough for the report's 512 bytes, with the kernel's name and the invocation in it */
  cr_expect(strlen(out) < 400, "%zu bytes", strlen(out));
  /* a message without the object list or the spec's words stays whole; a small buffer truncates */
  vkp_condense_validation(NULL, "Hazard WRITE_AFTER_READ for VkBuffer (0x1f)", out, sizeof out);
  cr_expect_str_eq(out, "Hazard WRITE_AFTER_READ for VkBuffer");
  vkp_condense_validation("SYNC-HAZARD-WRITE-AFTER-READ", "x", out, 8);
  cr_expect_str_eq(out, "SYNC-HA");
  vkp_condense_validation(NULL, NULL, out, sizeof out);
  cr_expect_str_eq(out, "");
}
