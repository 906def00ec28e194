/* cu_ptx.c — the embedded PTX: one module per kernel family and compute class, compiled by nvcc
 * at build time (plugins/cuda/CMakeLists.txt) and turned into arrays by the toolkit's bin2c
 * (NUL-terminated, as cuModuleLoadDataEx wants PTX text). */
#include <stddef.h>

#include "cu_internal.h"

#include "cu_ptx_ew_0.h"
#include "cu_ptx_ew_1.h"
#include "cu_ptx_ew_2.h"
#include "cu_ptx_ew_3.h"
#include "cu_ptx_red_0.h"
#include "cu_ptx_red_1.h"
#include "cu_ptx_red_2.h"
#include "cu_ptx_red_3.h"
#include "cu_ptx_smx_0.h"
#include "cu_ptx_smx_1.h"
#include "cu_ptx_mm_0.h"
#include "cu_ptx_mm_1.h"
#include "cu_ptx_conv_0.h"
#include "cu_ptx_conv_1.h"
#include "cu_ptx_pool_0.h"
#include "cu_ptx_pool_1.h"

#define PTX_(arr, name) \
  { name, (const char *)arr, sizeof arr }
#define NONE_ \
  { NULL, NULL, 0 }
static const cu_ptx_t table[CU_FAM_COUNT][CU_CLASS_COUNT] = {
    [CU_FAM_EW] = {PTX_(cu_ptx_ew_0, "elementwise.f32"), PTX_(cu_ptx_ew_1, "elementwise.f64"),
                   PTX_(cu_ptx_ew_2, "elementwise.i32"), PTX_(cu_ptx_ew_3, "elementwise.i64")},
    [CU_FAM_RED] = {PTX_(cu_ptx_red_0, "reduce.f32"), PTX_(cu_ptx_red_1, "reduce.f64"),
                    PTX_(cu_ptx_red_2, "reduce.i32"), PTX_(cu_ptx_red_3, "reduce.i64")},
    [CU_FAM_SMX] = {PTX_(cu_ptx_smx_0, "softmax.f32"), PTX_(cu_ptx_smx_1, "softmax.f64"), NONE_, NONE_},
    [CU_FAM_MM] = {PTX_(cu_ptx_mm_0, "matmul.f32"), PTX_(cu_ptx_mm_1, "matmul.f64"), NONE_, NONE_},
    [CU_FAM_CONV] = {PTX_(cu_ptx_conv_0, "conv.f32"), PTX_(cu_ptx_conv_1, "conv.f64"), NONE_, NONE_},
    [CU_FAM_POOL] = {PTX_(cu_ptx_pool_0, "pool.f32"), PTX_(cu_ptx_pool_1, "pool.f64"), NONE_, NONE_},
};

const cu_ptx_t *cu_ptx(int fam, int cls) {
  if (fam < 0 || fam >= CU_FAM_COUNT || cls < 0 || cls >= CU_CLASS_COUNT) return NULL;
  return table[fam][cls].text ? &table[fam][cls] : NULL;
}

int cu_ptx_toolkit_version(void) { return CUDA_VERSION; /* the toolkit's cuda.h that built the PTX */ }
