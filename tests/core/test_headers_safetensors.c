/* parity/safetensors.h compiles on its own (its build is the check). */
#include "parity/safetensors.h"

#include <criterion/criterion.h>

Test(headers, safetensors_h_stands_alone) {
  cr_assert_str_eq(parity_st_dtype_name(PARITY_DTYPE_BF16), "BF16");
  cr_assert_eq(parity_st_dtype_parse("I64"), PARITY_DTYPE_I64);
  cr_assert_eq(parity_st_dtype_parse("U16"), PARITY_DTYPE_INVALID);
}
