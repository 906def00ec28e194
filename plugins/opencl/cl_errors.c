/* cl_errors.c — every OpenCL error code with its name and the parity status it maps to.
 * Pure tables: no OpenCL calls and no plugin state, so tests can compile this file alone.
 * Extension codes are listed by value, since not every cl.h declares them. */
#include "cl_internal.h"

/* X(code, NAME, parity status) */
// clang-format off
#define OCL_ERROR_LIST(X)                                                   \
  X(0, CL_SUCCESS, OK)                                                      \
  X(-1, CL_DEVICE_NOT_FOUND, UNAVAILABLE)                                   \
  X(-2, CL_DEVICE_NOT_AVAILABLE, UNAVAILABLE)                               \
  X(-3, CL_COMPILER_NOT_AVAILABLE, UNAVAILABLE)                             \
  X(-4, CL_MEM_OBJECT_ALLOCATION_FAILURE, OUT_OF_MEMORY)                    \
  X(-5, CL_OUT_OF_RESOURCES, DEVICE_ERROR)                                  \
  X(-6, CL_OUT_OF_HOST_MEMORY, OUT_OF_MEMORY)                               \
  X(-7, CL_PROFILING_INFO_NOT_AVAILABLE, UNSUPPORTED)                       \
  X(-8, CL_MEM_COPY_OVERLAP, INVALID_ARGUMENT)                              \
  X(-9, CL_IMAGE_FORMAT_MISMATCH, INVALID_ARGUMENT)                         \
  X(-10, CL_IMAGE_FORMAT_NOT_SUPPORTED, UNSUPPORTED)                        \
  X(-11, CL_BUILD_PROGRAM_FAILURE, INTERNAL)                                \
  X(-12, CL_MAP_FAILURE, DEVICE_ERROR)                                      \
  X(-13, CL_MISALIGNED_SUB_BUFFER_OFFSET, INVALID_ARGUMENT)                 \
  X(-14, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, DEVICE_ERROR)        \
  X(-15, CL_COMPILE_PROGRAM_FAILURE, INTERNAL)                              \
  X(-16, CL_LINKER_NOT_AVAILABLE, UNAVAILABLE)                              \
  X(-17, CL_LINK_PROGRAM_FAILURE, INTERNAL)                                 \
  X(-18, CL_DEVICE_PARTITION_FAILED, DEVICE_ERROR)                          \
  X(-19, CL_KERNEL_ARG_INFO_NOT_AVAILABLE, UNSUPPORTED)                     \
  X(-30, CL_INVALID_VALUE, INTERNAL)                                        \
  X(-31, CL_INVALID_DEVICE_TYPE, INTERNAL)                                  \
  X(-32, CL_INVALID_PLATFORM, UNAVAILABLE)                                  \
  X(-33, CL_INVALID_DEVICE, UNAVAILABLE)                                    \
  X(-34, CL_INVALID_CONTEXT, INTERNAL)                                      \
  X(-35, CL_INVALID_QUEUE_PROPERTIES, UNSUPPORTED)                          \
  X(-36, CL_INVALID_COMMAND_QUEUE, INTERNAL)                                \
  X(-37, CL_INVALID_HOST_PTR, INVALID_ARGUMENT)                             \
  X(-38, CL_INVALID_MEM_OBJECT, INVALID_ARGUMENT)                           \
  X(-39, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, INVALID_ARGUMENT)              \
  X(-40, CL_INVALID_IMAGE_SIZE, INVALID_ARGUMENT)                           \
  X(-41, CL_INVALID_SAMPLER, INVALID_ARGUMENT)                              \
  X(-42, CL_INVALID_BINARY, INTERNAL)                                       \
  X(-43, CL_INVALID_BUILD_OPTIONS, INVALID_ARGUMENT)                        \
  X(-44, CL_INVALID_PROGRAM, INTERNAL)                                      \
  X(-45, CL_INVALID_PROGRAM_EXECUTABLE, INTERNAL)                           \
  X(-46, CL_INVALID_KERNEL_NAME, INTERNAL)                                  \
  X(-47, CL_INVALID_KERNEL_DEFINITION, INTERNAL)                            \
  X(-48, CL_INVALID_KERNEL, INTERNAL)                                       \
  X(-49, CL_INVALID_ARG_INDEX, INTERNAL)                                    \
  X(-50, CL_INVALID_ARG_VALUE, INTERNAL)                                    \
  X(-51, CL_INVALID_ARG_SIZE, INTERNAL)                                     \
  X(-52, CL_INVALID_KERNEL_ARGS, INTERNAL)                                  \
  X(-53, CL_INVALID_WORK_DIMENSION, INTERNAL)                               \
  X(-54, CL_INVALID_WORK_GROUP_SIZE, INTERNAL)                              \
  X(-55, CL_INVALID_WORK_ITEM_SIZE, INTERNAL)                               \
  X(-56, CL_INVALID_GLOBAL_OFFSET, INTERNAL)                                \
  X(-57, CL_INVALID_EVENT_WAIT_LIST, INTERNAL)                              \
  X(-58, CL_INVALID_EVENT, INTERNAL)                                        \
  X(-59, CL_INVALID_OPERATION, INTERNAL)                                    \
  X(-60, CL_INVALID_GL_OBJECT, INVALID_ARGUMENT)                            \
  X(-61, CL_INVALID_BUFFER_SIZE, OUT_OF_MEMORY)                             \
  X(-62, CL_INVALID_MIP_LEVEL, INVALID_ARGUMENT)                            \
  X(-63, CL_INVALID_GLOBAL_WORK_SIZE, INTERNAL)                             \
  X(-64, CL_INVALID_PROPERTY, INTERNAL)                                     \
  X(-65, CL_INVALID_IMAGE_DESCRIPTOR, INVALID_ARGUMENT)                     \
  X(-66, CL_INVALID_COMPILER_OPTIONS, INVALID_ARGUMENT)                     \
  X(-67, CL_INVALID_LINKER_OPTIONS, INVALID_ARGUMENT)                       \
  X(-68, CL_INVALID_DEVICE_PARTITION_COUNT, INVALID_ARGUMENT)               \
  X(-69, CL_INVALID_PIPE_SIZE, INVALID_ARGUMENT)                            \
  X(-70, CL_INVALID_DEVICE_QUEUE, INTERNAL)                                 \
  X(-71, CL_INVALID_SPEC_ID, INTERNAL)                                      \
  X(-72, CL_MAX_SIZE_RESTRICTION_EXCEEDED, OUT_OF_RANGE)                    \
  X(-1000, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, INVALID_ARGUMENT)        \
  X(-1001, CL_PLATFORM_NOT_FOUND_KHR, UNAVAILABLE)                          \
  X(-1002, CL_INVALID_D3D10_DEVICE_KHR, INVALID_ARGUMENT)                   \
  X(-1003, CL_INVALID_D3D10_RESOURCE_KHR, INVALID_ARGUMENT)                 \
  X(-1004, CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR, INVALID_ARGUMENT)        \
  X(-1005, CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR, INVALID_ARGUMENT)            \
  X(-1006, CL_INVALID_D3D11_DEVICE_KHR, INVALID_ARGUMENT)                   \
  X(-1007, CL_INVALID_D3D11_RESOURCE_KHR, INVALID_ARGUMENT)                 \
  X(-1008, CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR, INVALID_ARGUMENT)        \
  X(-1009, CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR, INVALID_ARGUMENT)            \
  X(-1010, CL_INVALID_DX9_MEDIA_ADAPTER_KHR, INVALID_ARGUMENT)              \
  X(-1011, CL_INVALID_DX9_MEDIA_SURFACE_KHR, INVALID_ARGUMENT)              \
  X(-1012, CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR, INVALID_ARGUMENT)     \
  X(-1013, CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR, INVALID_ARGUMENT)         \
  X(-1057, CL_DEVICE_PARTITION_FAILED_EXT, DEVICE_ERROR)                    \
  X(-1058, CL_INVALID_PARTITION_COUNT_EXT, INVALID_ARGUMENT)                \
  X(-1059, CL_INVALID_PARTITION_NAME_EXT, INVALID_ARGUMENT)                 \
  X(-1092, CL_EGL_RESOURCE_NOT_ACQUIRED_KHR, INVALID_ARGUMENT)              \
  X(-1093, CL_INVALID_EGL_OBJECT_KHR, INVALID_ARGUMENT)                     \
  X(-1094, CL_INVALID_ACCELERATOR_INTEL, INVALID_ARGUMENT)                  \
  X(-1095, CL_INVALID_ACCELERATOR_TYPE_INTEL, INVALID_ARGUMENT)             \
  X(-1096, CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL, INVALID_ARGUMENT)       \
  X(-1097, CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL, UNSUPPORTED)            \
  X(-1098, CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL, INVALID_ARGUMENT)         \
  X(-1099, CL_INVALID_VA_API_MEDIA_SURFACE_INTEL, INVALID_ARGUMENT)         \
  X(-1100, CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL, INVALID_ARGUMENT) \
  X(-1101, CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL, INVALID_ARGUMENT)    \
  X(-1143, CL_INVALID_SEMAPHORE_KHR, INVALID_ARGUMENT)                      \
  X(-1144, CL_INVALID_COMMAND_BUFFER_KHR, INVALID_ARGUMENT)                 \
  X(-1145, CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, INVALID_ARGUMENT)           \
  X(-1146, CL_INCOMPATIBLE_COMMAND_QUEUE_KHR, INVALID_ARGUMENT)             \
  X(-1147, CL_INVALID_MUTABLE_COMMAND_KHR, INVALID_ARGUMENT)
// clang-format on

const char *ocl_error_name(cl_int err) {
  switch (err) {
#define OCL_X_(code, NAME, st) \
  case code: return #NAME;
    OCL_ERROR_LIST(OCL_X_)
#undef OCL_X_
    default: return NULL;
  }
}

int32_t ocl_error_status(cl_int err) {
  switch (err) {
#define OCL_X_(code, NAME, st) \
  case code: return PARITY_STATUS_##st;
    OCL_ERROR_LIST(OCL_X_)
#undef OCL_X_
    default: return PARITY_STATUS_DEVICE_ERROR; /* vendor codes (e.g. -9999): a device fault */
  }
}
