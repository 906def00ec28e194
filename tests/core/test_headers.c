/* tensor.h compiles on its own: this file includes it and nothing else from parity (its build is
 * the check; test_headers_nn.c does the same for nn.h). */
#include "parity/tensor.h"

#include <criterion/criterion.h>

Test(headers, tensor_h_stands_alone) {
  parity_tensor_t *t = NULL;
  cr_assert_eq(parity_tensor_numel(t), 0);
}
