/* kp_names.c — compute classes and kernel names, one statement for the OpenCL and CUDA plugins
 * (kp_kernels.h's list, kp_host.h's classes). */
#include "kp_host.h"

int kp_class_of(int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F64: return KP_CLASS_D;
    case PARITY_DTYPE_I32:
    case PARITY_DTYPE_BOOL: return KP_CLASS_I;
    case PARITY_DTYPE_I64: return KP_CLASS_L;
    default: return KP_CLASS_F;
  }
}

const char *kp_class_name(int cls) {
  static const char *const names[KP_CLASS_COUNT] = {"f32", "f64", "i32", "i64"};
  return cls >= 0 && cls < KP_CLASS_COUNT ? names[cls] : "?";
}

const char *kp_kernel_name(int kid) {
  static const char *const names[KP_K_COUNT] = {
#define KP_NAME_(n, family) #n,
      KP_KERNEL_LIST(KP_NAME_)
#undef KP_NAME_
  };
  return kid >= 0 && kid < KP_K_COUNT ? names[kid] : "?";
}
