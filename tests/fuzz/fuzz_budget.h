/* fuzz_budget.h — a fuzzer's size budget: unless the command line sets them, -malloc_limit_mb=16
 * and -rss_limit_mb=512, so that an input which makes a reader allocate or hold more (a gzip bomb,
 * a header whose sizes are believed) is reported as a finding. Called from LLVMFuzzerInitialize,
 * which libFuzzer runs before it parses its flags. */
#ifndef PARITY_FUZZ_BUDGET_H
#define PARITY_FUZZ_BUDGET_H

#include <stdlib.h>
#include <string.h>

static void fuzz_budget(int *argc, char ***argv) {
  static const char *const add[] = {"-malloc_limit_mb=16", "-rss_limit_mb=512"};
  char **v = malloc(sizeof *v * ((size_t)*argc + 3));
  if (!v) return;
  int n = 0;
  for (int i = 0; i < *argc; i++) v[n++] = (*argv)[i];
  for (int k = 0; k < 2; k++) {
    size_t flag = strchr(add[k], '=') - add[k] + 1; /* "-malloc_limit_mb=" */
    int given = 0;
    for (int i = 1; i < *argc; i++) given |= !strncmp((*argv)[i], add[k], flag);
    if (!given) v[n++] = (char *)add[k];
  }
  v[n] = NULL;
  *argc = n;
  *argv = v; /* kept for the life of the process */
}

#endif
