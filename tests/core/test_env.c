/* The checked parser (parity_support/parse.h, env.h) and the variables parity_context_create reads:
 * every bad value is refused with the variable, the value as written and what is accepted; none
 * falls back silently (issue 38, item 2). */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"
#include "parity_support/env.h"
#include "parity_support/parse.h"

static char err[200];

Test(parse, numbers_must_be_whole_finite_and_in_range) {
  double v = -1;
  cr_assert_eq(psup_parse_double("X", "2.5", 0.001, 86400, "seconds", &v, err, sizeof err), 0);
  cr_assert_eq(v, 2.5);
  const char *bad[] = {"nan", "inf", "-inf", "abc", "", "5s", " 5", "-5", "1e-300", "1e400", "0x", NULL};
  for (int i = 0; bad[i]; i++) {
    v = 7;
    cr_assert_eq(psup_parse_double("PARITY_DIST_TIMEOUT", bad[i], 0.001, 86400, "seconds", &v, err, sizeof err), -1,
                 "'%s' accepted", bad[i]);
    cr_assert_eq(v, 7, "'%s' changed the output", bad[i]);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "PARITY_DIST_TIMEOUT='%s'", bad[i]);
    cr_assert(strstr(err, quoted), "%s", err);
    cr_assert(strstr(err, "seconds in [0.001, 86400]"), "%s", err);
  }
  cr_assert_eq(psup_parse_double("X", "nan", 0, 1, NULL, &v, err, sizeof err), -1);
  cr_assert(strstr(err, "not a finite number"), "%s", err);
}

Test(parse, integers_are_decimal_and_in_range) {
  long long v = -1;
  cr_assert_eq(psup_parse_int("N", "42", 0, 100, &v, err, sizeof err), 0);
  cr_assert_eq(v, 42);
  const char *bad[] = {"0x10", "1.5", "1e3", "", "-", "101", "-1", "99999999999999999999999", "4 ", NULL};
  for (int i = 0; bad[i]; i++)
    cr_assert_eq(psup_parse_int("N", bad[i], 0, 100, &v, err, sizeof err), -1, "'%s'", bad[i]);
  cr_assert_eq(v, 42);
}

Test(parse, words_list_the_choices) {
  static const char *const words[] = {"auto", "on", "off", NULL};
  int i = -1;
  cr_assert_eq(psup_parse_choice("V", "off", words, &i, err, sizeof err), 0);
  cr_assert_eq(i, 2);
  cr_assert_eq(psup_parse_choice("V", "Off", words, &i, err, sizeof err), -1);
  cr_assert_str_eq(err, "V='Off' is not one of auto, on, off; did you mean off?");
  cr_assert_eq(psup_parse_choice("V", "sideways", words, &i, err, sizeof err), -1);
  cr_assert_str_eq(err, "V='sideways' is not one of auto, on, off"); /* nothing close: no guess */
  int f = -1;
  cr_assert_eq(psup_parse_flag("F", "yes", &f, err, sizeof err), 0);
  cr_assert_eq(f, 1);
  cr_assert_eq(psup_parse_flag("F", "2", &f, err, sizeof err), -1);
}

Test(parse, a_long_value_is_quoted_cut_not_overflowing) {
  char text[5000];
  memset(text, '9', sizeof text - 1);
  text[sizeof text - 1] = 0;
  double v;
  cr_assert_eq(psup_parse_double("X", text, 0, 1, NULL, &v, err, sizeof err), -1);
  cr_assert(strstr(err, "...'"), "%s", err);
}

Test(env, unset_or_empty_gives_the_default) {
  unsetenv("PARITY_TEST_KNOB");
  double v;
  cr_assert_eq(psup_env_double("PARITY_TEST_KNOB", 0, 1, NULL, 0.5, &v, err, sizeof err), 0);
  cr_assert_eq(v, 0.5);
  setenv("PARITY_TEST_KNOB", "", 1);
  cr_assert_eq(psup_env_double("PARITY_TEST_KNOB", 0, 1, NULL, 0.25, &v, err, sizeof err), 0);
  cr_assert_eq(v, 0.25);
  setenv("PARITY_TEST_KNOB", "2", 1);
  cr_assert_eq(psup_env_double("PARITY_TEST_KNOB", 0, 1, NULL, 0.25, &v, err, sizeof err), -1);
  cr_assert(strstr(err, "PARITY_TEST_KNOB='2' is out of range"), "%s", err);
}

/* context_create refuses each bad value; the context is not made and the message quotes it */
static void refused(const char *var, const char *value, const char *expect) {
  static const char *const vars[] = {
      "PARITY_LOG", "PARITY_DEVICE", "PARITY_VERIFY", "PARITY_PLAN_PREPARE", "PARITY_PLAN_PRUNE", "PARITY_CACHE_LIMIT",
      NULL};
  for (int i = 0; vars[i]; i++) unsetenv(vars[i]);
  setenv("PARITY_BACKEND", "cpu", 1);
  setenv(var, value, 1);
  parity_context_t *ctx = (parity_context_t *)1;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_INVALID_ARGUMENT, "%s=%s accepted", var, value);
  cr_assert_null(ctx);
  cr_assert(strstr(parity_last_error(), expect), "%s=%s: %s", var, value, parity_last_error());
  unsetenv(var);
}

Test(env, context_create_refuses_each_bad_value_as_written) {
  refused("PARITY_LOG", "verbose", "PARITY_LOG='verbose' is not one of quiet, off, warn, debug");
  refused("PARITY_DEVICE", "x1", "PARITY_DEVICE='x1' is not a whole number");
  refused("PARITY_DEVICE", "-1", "PARITY_DEVICE='-1' is out of range");
  refused("PARITY_DEVICE", "99999999999", "PARITY_DEVICE='99999999999' is out of range");
  refused("PARITY_VERIFY", "gpu", "PARITY_VERIFY='gpu' is not one of off, cpu");
  refused("PARITY_PLAN_PREPARE", "never", "PARITY_PLAN_PREPARE='never' is not one of 0, 1");
  refused("PARITY_PLAN_PRUNE", "maybe", "PARITY_PLAN_PRUNE='maybe' is not one of 0, 1");
  refused("PARITY_CACHE_LIMIT", "-5", "PARITY_CACHE_LIMIT='-5' is not a size");
  refused("PARITY_CACHE_LIMIT", "5T", "PARITY_CACHE_LIMIT='5T' is not a size");
}

Test(env, good_values_still_open_a_context) {
  setenv("PARITY_BACKEND", "cpu", 1);
  setenv("PARITY_LOG", "warn", 1);
  setenv("PARITY_VERIFY", "off", 1);
  setenv("PARITY_PLAN_PREPARE", "0", 1);
  setenv("PARITY_PLAN_PRUNE", "0", 1);
  setenv("PARITY_CACHE_LIMIT", "64M", 1);
  setenv("PARITY_DEVICE", "0", 1);
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(parse, the_closest_name_is_suggested_only_when_it_is_close) {
  static const char *const backends[] = {"cpu", "cuda", "opencl", "vulkan", "auto"};
  cr_assert_str_eq(psup_closest("cdua", backends, 5), "cuda");     /* a swap */
  cr_assert_str_eq(psup_closest("vulcan", backends, 5), "vulkan"); /* a change */
  cr_assert_str_eq(psup_closest("opnecl", backends, 5), "opencl");
  cr_assert_str_eq(psup_closest("CPU", backends, 5), "cpu");
  cr_assert_null(psup_closest("metal", backends, 5));
  cr_assert_null(psup_closest("", backends, 5));
}

Test(env, a_misspelt_backend_gets_a_suggestion) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpuu";
  o.log_level = 0;
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_NOT_FOUND);
  cr_assert(strstr(parity_last_error(), "PARITY_BACKEND='cpuu' names no plugin"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "did you mean cpu?"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

/* Issue 37, item 2: OpenMP's idle threads spin briefly, not for milliseconds, unless the user chose
 * (each Criterion test runs in a process of its own, so the once-per-process setting is fresh). */
Test(env, openmp_threads_spin_briefly_unless_the_user_chose) {
  unsetenv("GOMP_SPINCOUNT");
  unsetenv("OMP_WAIT_POLICY");
  setenv("PARITY_BACKEND", "cpu", 1);
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "(unset)", "300");
  parity_context_destroy(ctx);
}

Test(env, a_chosen_openmp_wait_policy_is_kept) {
  unsetenv("GOMP_SPINCOUNT");
  setenv("OMP_WAIT_POLICY", "active", 1);
  setenv("PARITY_BACKEND", "cpu", 1);
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_null(getenv("GOMP_SPINCOUNT"));
  parity_context_destroy(ctx);
}
