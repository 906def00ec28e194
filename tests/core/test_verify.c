/* Shadow verification (PARITY_VERIFY=cpu, parity-train --verify): a training run is clean on every
 * backend that is built, and on a plugin with a kernel bug the first op that breaks its bound is
 * named with its dtype, direction, autodiff node and a reproduce command. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core_test.h"

/* parity-train --verify on a backend; its exit status (-1: did not exit), the last line in out. */
static int train_verify(const char *env, const char *backend, char *out, size_t n) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "env PARITY_LOG=quiet PARITY_PLUGIN_PATH='%s/../tests/plugins' %s PARITY_BACKEND=%s "
           "'%s/parity-train' --steps 4 --seed 5 --verify 2>&1",
           PARITY_BIN_DIR, env, backend, PARITY_BIN_DIR);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char line[4096];
  out[0] = 0;
  size_t used = 0; /* all of it (the verdict line need not be the last one), the tail kept when long */
  while (fgets(line, sizeof line, p)) {
    size_t len = strlen(line);
    if (used + len + 1 > n) used = 0;
    memcpy(out + used, line, len + 1);
    used += len;
  }
  int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

Test(verify, training_agrees_with_the_cpu_oracle_on_every_backend, .timeout = 600) {
  const char *backends[] = {"cpu", "opencl", "vulkan"};
  char out[16384];
  for (int b = 0; b < 3; b++) {
    int rc = train_verify("", backends[b], out, sizeof out);
    if (rc != 0 && (strstr(out, "names no plugin") || strstr(out, "unavailable"))) continue; /* not here */
    cr_assert_eq(rc, 0, "%s: status %d: %s", backends[b], rc, out);
    cr_assert(strstr(out, "agree with the CPU plugin in float64"), "%s: %s", backends[b], out);
    cr_assert(!strstr(out, "verify: 0 ops"), "%s checked nothing: %s", backends[b], out);
  }
}

Test(verify, the_first_op_a_faulty_plugin_gets_wrong_is_named, .timeout = 300) {
  char out[16384];
  int rc = train_verify("PARITY_FAULT=sum-f16", "fault", out, sizeof out);
  cr_assert_eq(rc, 1, "a sum accumulated in f16 must fail verification (status %d): %s", rc, out);
  cr_assert(strstr(out, "is the first to break its bound"), "%s", out);
  cr_assert(strstr(out, "sum f32 forward"), "names the op, dtype and direction: %s", out);
  cr_assert(strstr(out, "autodiff node #"), "names the autodiff node: %s", out);
  cr_assert(strstr(out, "parity-conform --backend fault --op sum --dtype f32 --direction forward"), "%s", out);
  /* the same plugin without the fault is clean */
  rc = train_verify("PARITY_FAULT=", "fault", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
}
