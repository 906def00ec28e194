/* nn.h compiles on its own: this file includes it and nothing else from parity. */
#include "parity/nn.h"

#include <criterion/criterion.h>

Test(headers, nn_h_stands_alone) { cr_assert_eq(parity_optimizer_set_lr(NULL, 1), PARITY_STATUS_INVALID_ARGUMENT); }
