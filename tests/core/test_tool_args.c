/* The tools validate every argument and exit 2 on bad usage, before doing any work, with a
 * message that names the value (not a crash, not "NOTHING CHECKED", not a silent default). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static int run(const char *args, char *out, size_t n) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd '%s' && env PARITY_LOG=quiet PARITY_PLUGIN_PATH= %s 2>&1", PARITY_BIN_DIR, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, n - 1, p);
  out[got] = 0;
  int status = pclose(p);
  cr_assert(WIFEXITED(status), "'%s' was killed by a signal: %s", args, out);
  return WEXITSTATUS(status);
}

#define USAGE_ERROR(args, needle)                                                     \
  do {                                                                                \
    char out_[16384];                                                                 \
    cr_assert_eq(run(args, out_, sizeof out_), 2, "%s: %s", args, out_);              \
    cr_assert(strstr(out_, needle), "%s: output lacks '%s': %s", args, needle, out_); \
  } while (0)

Test(tool_args, conform_unknown_op_exits_2_listing_the_ops, .timeout = 30) {
  USAGE_ERROR("./parity-conform --op nonsense", "unknown op 'nonsense'; known: neg abs");
}

Test(tool_args, conform_unknown_dtype_exits_2, .timeout = 30) {
  USAGE_ERROR("./parity-conform --dtype f33", "unknown dtype 'f33'; known: f32");
}

Test(tool_args, conform_unwritable_report_fails_before_running, .timeout = 10) {
  USAGE_ERROR("./parity-conform --json /nonexistent-folder/report.json",
              "cannot write '/nonexistent-folder/report.json'");
  /* reports go through the atomic writer: a device (or FIFO, folder) is refused before any work */
  USAGE_ERROR("./parity-conform --json /dev/null", "cannot write '/dev/null': it is a device");
}

Test(tool_args, conform_numbers_are_checked, .timeout = 30) {
  USAGE_ERROR("./parity-conform --device x", "--device takes a device index");
  USAGE_ERROR("./parity-conform --seed 12abc", "--seed takes a non-negative integer");
}

Test(tool_args, conform_cast_labels_still_select, .timeout = 60) {
  char out[16384];
  cr_assert_eq(run("./parity-conform --backend cpu --op cast --dtype f32-\\>f16", out, sizeof out), 0, "%s", out);
}

Test(tool_args, bench_numbers_are_checked, .timeout = 30) {
  USAGE_ERROR("./parity-bench --reps abc", "--reps takes an integer from 1");
  USAGE_ERROR("./parity-bench --log2n 99", "--log2n takes an integer from 10 to 30");
}
