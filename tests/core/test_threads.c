/* Threads: several threads, each with its own context, train at once and get bitwise the same
 * losses as one thread alone (no shared mutable state without synchronisation). */
#include <criterion/criterion.h>

#include "threads_train.h"

Test(threads, contexts_on_several_threads_train_at_once_and_agree_bitwise, .timeout = 120) {
  char err[512];
  cr_assert_eq(threads_train_check(err, sizeof err), 0, "%s", err);
}
