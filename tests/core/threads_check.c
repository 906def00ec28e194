/* threads_check — threads_train.h as a plain program (exit 0: passed), for ThreadSanitizer. */
#include "threads_train.h"

int main(void) {
  char err[512];
  if (threads_train_check(err, sizeof err) != 0) {
    fprintf(stderr, "threads_check: FAILED: %s\n", err);
    return 1;
  }
  printf("threads_check: %d threads trained at once, each bitwise equal to one thread alone\n", THREADS);
  return 0;
}
