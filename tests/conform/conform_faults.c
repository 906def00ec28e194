/* conform_faults.c — every conformance rule fails on a plugin that breaks it.
 *
 * Each test runs parity-conform as a subprocess against the fault plugin (tests/plugins/, found
 * through PARITY_PLUGIN_PATH only) with a narrow filter: first with PARITY_FAULT empty, where the
 * plugin is the CPU plugin and must pass; then with one fault, where the run must exit 1 and name
 * the failing case in its output and its JSON. A test is skipped while the CPU plugin does not yet
 * run the ops it needs (the suite then reports them unsupported, and nothing can be proven). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct conform_run_t {
  int status;   /* exit status of parity-conform */
  char *output; /* stdout and stderr */
  char *json;   /* the --json file */
} conform_run_t;

static char *slurp_stream(FILE *f) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  size_t got;
  while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len < 2) {
      cap *= 2;
      buf = realloc(buf, cap);
      cr_assert_not_null(buf);
    }
  }
  buf[len] = 0;
  return buf;
}

/* Run a shell command line (parity-conform with --json appended) and collect everything. */
static conform_run_t run_command(const char *command_line) {
  char json_path[] = "/tmp/parity-conform-test-XXXXXX";
  int fd = mkstemp(json_path);
  cr_assert(fd >= 0);
  close(fd);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s --json '%s' 2>&1", command_line, json_path);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p, "cannot run: %s", cmd);
  conform_run_t r;
  r.output = slurp_stream(p);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  FILE *j = fopen(json_path, "r");
  r.json = j ? slurp_stream(j) : strdup("");
  if (j) fclose(j);
  unlink(json_path);
  return r;
}

/* parity-conform on the fault plugin with PARITY_FAULT=fault ("" = none) and extra arguments. */
static conform_run_t conform(const char *fault, const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "PARITY_LOG=quiet PARITY_PLUGIN_PATH='%s' PARITY_FAULT='%s' '%s' --backend fault "
           "--failures-only %s",
           PARITY_FAULT_PLUGIN_DIR, fault, PARITY_CONFORM_EXE, args);
  return run_command(cmd);
}

static void conform_free(conform_run_t *r) {
  free(r->output);
  free(r->json);
}

/* The JSON line of one case ("" when absent); results are one per line. */
static const char *result_line(const conform_run_t *r, const char *case_id, char *buf, size_t n) {
  char key[256];
  snprintf(key, sizeof key, "\"case\":\"%s\"", case_id);
  const char *at = strstr(r->json, key);
  buf[0] = 0;
  if (!at) return buf;
  const char *start = at, *end = strchr(at, '\n');
  while (start > r->json && start[-1] != '\n') start--;
  size_t len = end ? (size_t)(end - start) : strlen(start);
  snprintf(buf, n, "%.*s", (int)(len < n - 1 ? len : n - 1), start);
  return buf;
}

static int count(const char *hay, const char *needle) {
  int c = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) c++;
  return c;
}

/* The proof for one fault: clean run passes with something checked; faulty run fails `case_id`
 * (and the failure carries its reproduce command); `why` must appear in the failure message. */
static void expect_caught(const char *fault, const char *args, const char *case_id, const char *why) {
  conform_run_t clean = conform("", args);
  char line[4096];
  cr_assert_neq(clean.status, 2, "parity-conform could not run on the fault plugin:\n%s", clean.output);
  if (count(clean.json, "\"status\":\"pass\"") == 0 &&
      count(clean.json, "\"status\":\"unsupported\"") + count(clean.json, "\"status\":\"skipped\"") > 0) {
    conform_free(&clean);
    cr_skip_test("the CPU plugin does not run '%s' yet: nothing to prove", args);
  }
  cr_assert_eq(clean.status, 0, "without a fault, '%s' must pass:\n%s", args, clean.output);
  result_line(&clean, case_id, line, sizeof line);
  cr_assert(strstr(line, "\"status\":\"pass\""), "%s must pass without a fault: %s", case_id, line);
  conform_free(&clean);

  conform_run_t bad = conform(fault, args);
  cr_assert_eq(bad.status, 1, "PARITY_FAULT=%s: parity-conform %s must exit 1, got %d:\n%s", fault, args, bad.status,
               bad.output);
  result_line(&bad, case_id, line, sizeof line);
  cr_assert(strstr(line, "\"status\":\"fail\""), "PARITY_FAULT=%s must fail %s; its result: %s\n%s", fault, case_id,
            line, bad.output);
  cr_assert(strstr(line, why), "PARITY_FAULT=%s: the failure of %s must say '%s': %s", fault, case_id, why, line);
  char repro[300];
  snprintf(repro, sizeof repro, "--case '%s'", case_id);
  cr_assert(strstr(bad.output, repro), "the output must print the command that reproduces %s:\n%s", case_id,
            bad.output);
  conform_free(&bad);
}

Test(conform, compare_eps_breaks_the_eq_mask) {
  expect_caught("compare-eps", "--op eq --dtype f32 --case mask", "eq.f32.forward.mask", "must match bit for bit");
}

Test(conform, compare_eps_breaks_mask_under_gradient) {
  expect_caught("compare-eps", "--case hazard.mask-under-gradient", "hazard.mask-under-gradient",
                "eq([0,1,2], 1) gave");
}

Test(conform, compare_eps_breaks_the_masked_gradients_through_the_tape) {
  expect_caught("compare-eps", "--case hazard.mask-under-gradient.tape", "hazard.mask-under-gradient.tape",
                "count(x > 3) for x = 1..9 is 7, must be 6");
}

Test(conform, softmax_backward_from_unrounded_values_fails_in_bf16) {
  expect_caught("softmax-bwd-unrounded", "--op log_softmax --dtype bf16 --direction backward --case nll",
                "log_softmax.bf16.backward.nll", "outside the rule");
}

Test(conform, softmax_backward_from_unrounded_values_fails_softmax_too) {
  expect_caught("softmax-bwd-unrounded", "--op softmax --dtype bf16 --direction backward --case sum-grad",
                "softmax.bf16.backward.sum-grad", "outside the rule");
}

Test(conform, tie_first_fails_max_backward) {
  expect_caught("tie-first", "--op max --dtype f32 --direction backward --case ties", "max.f32.backward.ties",
                "outside the rule");
}

Test(conform, tie_first_fails_maximum_backward) {
  expect_caught("tie-first", "--op maximum --dtype f32 --direction backward --case ties", "maximum.f32.backward.ties",
                "outside the rule");
}

Test(conform, tie_first_fails_max_pool_backward) {
  expect_caught("tie-first", "--op max_pool2d --dtype f32 --direction backward --case ties",
                "max_pool2d.f32.backward.ties", "outside the rule");
}

Test(conform, conv_padding_off_by_one_fails_conv2d) {
  expect_caught("conv-pad", "--op conv2d --dtype f32 --case 3x3p1", "conv2d.f32.forward.3x3p1", "outside the rule");
}

Test(conform, conv_padding_off_by_one_fails_conv2d_backward) {
  expect_caught("conv-pad", "--op conv2d --dtype f32 --case 3x3p1", "conv2d.f32.backward.3x3p1", "outside the rule");
}

Test(conform, relu_gradient_at_zero_must_be_zero) {
  expect_caught("relu-grad-at-zero", "--op relu --dtype f32 --direction backward --case ties", "relu.f32.backward.ties",
                "outside the rule");
}

/* A sum's backward that reads x (abi/parity_plugin.h: SHAPE-ONLY there) gives the same bits on
 * finite x, so only the second backward run, with NaN in x and y, shows it. */
Test(conform, a_sum_gradient_that_reads_x_fails) {
  expect_caught("sum-grad-reads-x", "--op sum --dtype f32 --direction backward --case r1025", "sum.f32.backward.r1025",
                "depends on the values of x and y, which it must not");
}

Test(conform, sums_accumulated_in_f16_fail) {
  expect_caught("sum-f16", "--op sum --dtype f32 --direction forward --case r1025", "sum.f32.forward.r1025",
                "outside the rule");
}

Test(conform, nondeterministic_reduction_fails) {
  expect_caught("nondeterministic-reduce", "--op sum --dtype f32 --direction forward --case last33",
                "sum.f32.forward.last33", "nondeterministic");
}

Test(conform, nondeterministic_reduction_fails_the_determinism_claim) {
  expect_caught("nondeterministic-reduce", "--case cap.determinism", "cap.determinism", "then");
}

/* buffer_write copies the caller's memory before it returns (abi/parity_plugin.h): parity-conform
 * scribbles over each write's source once the write returns, so a plugin that reads it later
 * (write-reads-late) computes on the scribble, and the failure says so */
Test(conform, a_write_that_reads_the_callers_memory_late_fails) {
  expect_caught("write-reads-late", "--op add --dtype f32 --direction forward --case ties", "add.f32.forward.ties",
                "read the caller's memory after buffer_write returned");
}

Test(conform, write_past_the_output_is_caught_by_guards) {
  expect_caught("write-past-end", "--op add --dtype f32 --direction forward --case n33", "add.f32.forward.n33",
                "out-of-bounds write");
}

/* PARITY_CONFORM_PLACEMENT=start leaves the guard bytes after each tensor: the write past the end
 * is still caught there; an unknown placement is refused before anything runs (exit 2). */
Test(conform, placement_start_keeps_the_guard_after_and_an_unknown_placement_is_refused) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "PARITY_LOG=quiet PARITY_PLUGIN_PATH='%s' PARITY_FAULT=write-past-end PARITY_CONFORM_PLACEMENT=start '%s' "
           "--backend fault --op add --dtype f32 --direction forward --case n33",
           PARITY_FAULT_PLUGIN_DIR, PARITY_CONFORM_EXE);
  conform_run_t r = run_command(cmd);
  cr_expect_eq(r.status, 1, "%s", r.output);
  cr_expect(strstr(r.output, "out-of-bounds write") != NULL, "%s", r.output);
  cr_expect(strstr(r.output, "PARITY_CONFORM_PLACEMENT='start'") != NULL, "the reproduce line carries it:\n%s",
            r.output);
  conform_free(&r);
  snprintf(cmd, sizeof cmd, "PARITY_PLUGIN_PATH='%s' PARITY_CONFORM_PLACEMENT=middle '%s' --backend fault",
           PARITY_FAULT_PLUGIN_DIR, PARITY_CONFORM_EXE);
  r = run_command(cmd);
  cr_expect_eq(r.status, 2, "%s", r.output);
  cr_expect(strstr(r.output, "PARITY_CONFORM_PLACEMENT='middle' is not one of guarded, end, start") != NULL, "%s",
            r.output);
  conform_free(&r);
}

Test(conform, false_float64_fails_f64_cases) {
  expect_caught("false-f64", "--op add --dtype f64 --direction forward --case n33", "add.f64.forward.n33",
                "must match bit for bit");
}

Test(conform, false_float64_fails_the_capability_check) {
  expect_caught("false-f64", "--case cap.float64", "cap.float64", "not computed in f64");
}

Test(conform, max_dropping_nan_fails_max) {
  expect_caught("max-drops-nan", "--op max --dtype f32 --direction forward --case special", "max.f32.forward.special",
                "must match bit for bit");
}

Test(conform, max_dropping_nan_fails_maximum) {
  expect_caught("max-drops-nan", "--op maximum --dtype f32 --direction forward --case special",
                "maximum.f32.forward.special", "must match bit for bit");
}

Test(conform, inductor_recompute_fails_lowprec_logsoftmax_after_conv) {
  expect_caught("inductor-recompute", "--case hazard.lowprec-logsoftmax-after-conv",
                "hazard.lowprec-logsoftmax-after-conv", "cosine");
}

Test(conform, conv_padding_off_by_one_fails_the_layer_zoo) {
  expect_caught("conv-pad", "--case hazard.layer-zoo.conv", "hazard.layer-zoo.conv", "off by");
}

Test(conform, nondeterministic_reduction_breaks_eager_vs_replay) {
  expect_caught("nondeterministic-reduce", "--case hazard.eager-vs-replay", "hazard.eager-vs-replay",
                "differ between replay and eager");
}

Test(conform, the_printed_command_reproduces_a_failure_alone) {
  conform_run_t bad = conform("write-past-end", "--op add --dtype f32,f16 --direction forward --case n33,ties");
  cr_assert_neq(bad.status, 2, "%s", bad.output);
  if (count(bad.json, "\"status\":\"fail\"") == 0 && count(bad.json, "\"status\":\"unsupported\"") > 0) {
    conform_free(&bad);
    cr_skip_test("the CPU plugin does not run add yet");
  }
  const char *at = strstr(bad.output, "reproduce: ");
  cr_assert_not_null(at, "%s", bad.output);
  at += strlen("reproduce: ");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(at, "\n"), at);
  conform_free(&bad);
  conform_run_t again = run_command(cmd);
  cr_assert_eq(again.status, 1, "%s\n%s", cmd, again.output);
  cr_assert_eq(count(again.json, "\"case\":"), 1, "the command must run one case alone: %s\n%s", cmd, again.json);
  cr_assert_eq(count(again.json, "\"status\":\"fail\""), 1, "%s", again.json);
  conform_free(&again);
}

/* Issue 38, item 5: a plugin that crashes inside a kernel is named with the signal and the case, in
 * the output and the reports, and the other plugins are still tested (each runs in a child process),
 * one by one or two at a time (--jobs 2).
 * With --in-process the same run dies with the plugin. handle_segv=0: under ASan the fault is a
 * signal, as in a release build. */
Test(conform, a_plugin_that_crashes_is_named_and_the_others_are_still_tested) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "ASAN_OPTIONS=\"$ASAN_OPTIONS:handle_segv=0\" PARITY_LOG=quiet PARITY_PLUGIN_PATH='%s' "
           "PARITY_FAULT=crash-sum '%s' --op sum --dtype f32 --case all",
           PARITY_FAULT_PLUGIN_DIR, PARITY_CONFORM_EXE);
  conform_run_t r = run_command(cmd);
  cr_assert_eq(r.status, 1, "%s", r.output);
  cr_assert(strstr(r.output, "plugin fault crashed with SIGSEGV in sum.f32.forward.all"), "%s", r.output);
  cr_assert(strstr(r.output, "verdict cpu: PASS"), "the CPU plugin was not tested after the crash:\n%s", r.output);
  cr_assert(strstr(r.json, "\"plugin.crash\""), "%s", r.json);
  int results = count(r.json, "\"case\":");
  conform_free(&r);
  /* --jobs 2: both children at once, the same verdicts and report, each backend's output whole */
  char jobs[2100];
  snprintf(jobs, sizeof jobs, "%s --jobs 2", cmd);
  r = run_command(jobs);
  cr_assert_eq(r.status, 1, "%s", r.output);
  cr_assert(strstr(r.output, "plugin fault crashed with SIGSEGV in sum.f32.forward.all"), "%s", r.output);
  cr_assert(strstr(r.output, "verdict cpu: PASS"), "%s", r.output);
  cr_assert(strstr(r.output, "2 processes at a time"), "%s", r.output);
  cr_assert_eq(count(r.json, "\"case\":"), results, "--jobs 2 reported another set of results:\n%s", r.json);
  const char *cpu = strstr(r.output, "== cpu"), *cpu_verdict = strstr(r.output, "verdict cpu");
  cr_assert(cpu && cpu_verdict && cpu < cpu_verdict, "%s", r.output);
  const char *fault = strstr(r.output, "== fault");
  cr_assert(!fault || fault < cpu || fault > cpu_verdict, "the backends' outputs are interleaved:\n%s", r.output);
  conform_free(&r);
  char inproc[2100];
  snprintf(inproc, sizeof inproc, "%s --in-process", cmd);
  r = run_command(inproc);
  cr_assert_neq(r.status, 0, "%s", r.output);
  cr_assert_null(strstr(r.output, "verdict cpu: PASS"), "in one process the crash ends the run:\n%s", r.output);
  conform_free(&r);
}

/* `ops` on the CPU plugin with --jobs 2 against one process: split into `parts`, one header, one
 * table and verdict (`verdict`), the same results. */
static void expect_split_as_one_run(const char *ops, const char *dtypes, const char *parts, const char *verdict) {
  char cmd[2048], jobs[2100];
  snprintf(cmd, sizeof cmd, "PARITY_LOG=quiet '%s' --backend cpu --op %s --dtype %s", PARITY_CONFORM_EXE, ops, dtypes);
  conform_run_t one = run_command(cmd);
  cr_assert_eq(one.status, 0, "%s", one.output);
  snprintf(jobs, sizeof jobs, "%s --jobs 2", cmd);
  conform_run_t split = run_command(jobs);
  cr_assert_eq(split.status, 0, "%s", split.output);
  cr_assert(strstr(split.output, parts), "%s", split.output);
  cr_assert_eq(count(split.output, "== cpu"), 1, "one header:\n%s", split.output);
  cr_assert_eq(count(split.output, verdict), 1, "one verdict, every case:\n%s", split.output);
  cr_assert_eq(count(split.output, "core needs (f32): met by cpu"), 1, "%s", split.output);
  cr_assert_eq(count(split.json, "\"case\":"), count(one.json, "\"case\":"), "%s", split.json);
  cr_assert_eq(count(split.json, "\"status\":\"pass\""), count(one.json, "\"status\":\"pass\""), "%s", split.json);
  const char *table = strstr(one.output, "family "), *table2 = strstr(split.output, "family ");
  cr_assert(table && table2);
  cr_assert_eq(strncmp(table, table2, (size_t)(strstr(table, "verdict") - table)), 0, "the same table:\n%s\n%s", table,
               table2);
  conform_free(&one);
  conform_free(&split);
}

/* --jobs 2 on one backend with enough cases splits it into two parts (jobs.h), with more cases into
 * four, which the two jobs take as they come free: one header, one table and verdict, the same
 * results as one process; a part that crashes is named as in one run, and the other part's results
 * are kept. */
Test(conform, a_backend_split_into_parts_reports_as_one_run) {
  expect_split_as_one_run("add,mul,exp,sum", "f32,f64", "1 backend in 2 parts each, 2 processes at a time",
                          "verdict cpu: PASS on 187 of 187 cases");
  expect_split_as_one_run("add,mul,exp,sum,max,softmax", "f32,f64,i32",
                          "1 backend in 4 parts each, 2 processes at a time", "verdict cpu: PASS on 318 of 318 cases");
  char cmd[2048], jobs[2100];
  conform_run_t two;

  /* the sum cases are in the second part, which crashes at its first one */
  snprintf(jobs, sizeof jobs,
           "ASAN_OPTIONS=\"$ASAN_OPTIONS:handle_segv=0\" PARITY_LOG=quiet PARITY_PLUGIN_PATH='%s' "
           "PARITY_FAULT=crash-sum '%s' --backend fault --op add,sum --dtype f32,f64,f16,bf16 --jobs 2",
           PARITY_FAULT_PLUGIN_DIR, PARITY_CONFORM_EXE);
  two = run_command(jobs);
  cr_assert_eq(two.status, 1, "%s", two.output);
  cr_assert(strstr(two.output, "in 2 parts each"), "%s", two.output);
  cr_assert(strstr(two.output, "plugin fault crashed with SIGSEGV in sum."), "%s", two.output);
  cr_assert_eq(count(two.output, "verdict fault: FAIL"), 1, "%s", two.output);
  cr_assert(strstr(two.json, "\"plugin.crash\""), "%s", two.json);
  cr_assert_gt(count(two.json, "\"status\":\"pass\""), 40, "the first part's add cases are kept:\n%s", two.json);
  conform_free(&two);

  /* --part, what --jobs passes its children, is checked as --shard is */
  snprintf(cmd, sizeof cmd, "'%s' --backend cpu --part 2/2", PARITY_CONFORM_EXE);
  conform_run_t bad = run_command(cmd);
  cr_assert_eq(bad.status, 2, "%s", bad.output);
  cr_assert(strstr(bad.output, "--part takes K/P with 0 <= K < P, not '2/2'"), "%s", bad.output);
  conform_free(&bad);
}

Test(conform, an_unknown_fault_name_leaves_the_plugin_unavailable) {
  conform_run_t r = conform("no-such-fault", "--op add --dtype f32 --case n33");
  cr_assert_eq(r.status, 2, "%s", r.output);
  cr_assert(strstr(r.output, "unknown PARITY_FAULT 'no-such-fault'"), "%s", r.output);
  conform_free(&r);
}

/* ---- verdicts that state coverage ---------------------------------------------------------- */
Test(conform, a_plugin_that_refuses_every_op_is_nothing_checked) {
  conform_run_t r = conform("refuse-all", "");
  cr_assert_eq(r.status, 1, "a plugin that runs nothing must exit 1:\n%s", r.output);
  cr_assert(strstr(r.output, "verdict fault: NOTHING CHECKED: 0 of "), "%s", r.output);
  cr_assert(strstr(r.json, "\"verdict\":\"nothing checked\""), "%s", r.json);
  cr_assert_eq(count(r.output, "verdict fault:"), 1, "the verdict is printed once:\n%s", r.output);
  conform_free(&r);
}

Test(conform, a_plugin_claiming_dtypes_it_refuses_fails_cap_dtypes) {
  expect_caught("lie-dtypes", "--case cap.dtypes", "cap.dtypes",
                "dtype_mask claims f64, f16, bf16, i32, i64, bool, but supports() refuses every op in it");
}

Test(conform, a_plugin_claiming_float64_it_refuses_fails_cap_float64) {
  expect_caught("lie-dtypes", "--case cap.float64", "cap.float64", "claims float64 but refuses f64 add");
}

Test(conform, a_partial_plugin_passes_with_its_coverage_stated) {
  conform_run_t r = conform("lie-dtypes", "--op add,sub,mul,sum");
  cr_assert_eq(r.status, 0, "%s", r.output);
  cr_assert(strstr(r.output, "verdict fault: PASS on "), "%s", r.output);
  cr_assert(strstr(r.output, "): add, mul, sum in f32; "), "the verdict names what ran:\n%s", r.output);
  cr_assert(strstr(r.output, "claims f64, f16, bf16, i32, i64 (dtype_mask) but ran no case in it"), "%s", r.output);
  cr_assert(strstr(r.output, "unsupported: sub (f32 f64 f16 bf16 i32 i64; "), "one line per unsupported op:\n%s",
            r.output);
  cr_assert(strstr(r.output, "lie-dtypes runs f32 add, mul and sum only"), "with the plugin's reason:\n%s", r.output);
  cr_assert_lt(count(r.output, "\n"), 30, "a passing run prints a summary, not a table of every case:\n%s", r.output);
  conform_free(&r);
}

Test(conform, support_lists_each_op_dtype_and_direction_with_the_reason) {
  conform_run_t r = conform("lie-dtypes", "--support --op add --dtype f32,f16");
  cr_assert_eq(r.status, 0, "%s", r.output);
  cr_assert(strstr(r.output, "add          f32        forward   supported\n"), "%s", r.output);
  cr_assert(strstr(r.output, "add          f16        backward  unsupported: "), "%s", r.output);
  cr_assert(strstr(r.output, "lie-dtypes runs f32 add, mul and sum only"), "%s", r.output);
  conform_free(&r);
}

Test(conform, a_failure_names_the_operands_shapes_strides_and_broadcast_axes) {
  conform_run_t r = conform("write-past-end", "--op add --dtype f32 --direction forward --case bcast");
  cr_assert_eq(r.status, 1, "%s", r.output);
  cr_assert(strstr(r.output,
                   "operands: a f32[9,13] strides (1,0) contiguous, offset 64 B, broadcast axes {1}; "
                   "b f32[9,13] strides (0,1) contiguous, offset 80 B, broadcast axes {0}; y f32[9,13]"),
            "%s", r.output);
  conform_free(&r);
}

/* ---- kernel mutants: the bug classes of issue 10, each failing the default subset ------------ */
/* Every args selection below is a slice of the default subset (no --full). */
Test(conform, mutant_naive_sequential_f32_sum_fails_the_large_positive_sum) {
  expect_caught("naive-sum", "--op sum --dtype f32 --direction forward --case large", "sum.f32.forward.large",
                "outside the rule");
}

Test(conform, mutant_dropped_partial_sum_fails_the_spikes_and_positive_sums) {
  expect_caught("drop-partial", "--op sum --dtype f32 --direction forward --case spikes", "sum.f32.forward.spikes",
                "outside the rule");
  expect_caught("drop-partial", "--op sum --dtype f32 --direction forward --case large", "sum.f32.forward.large",
                "outside the rule");
}

/* The mutant differs on every 4th call; run alone, runs 1-3 agree: two runs would pass it. */
Test(conform, mutant_arrival_order_reduction_fails_within_four_runs) {
  expect_caught("arrival-order", "--op sum --dtype f32 --direction forward --case pos4099", "sum.f32.forward.pos4099",
                "in run 4");
}

Test(conform, a_plugin_that_refuses_everything_but_claims_dtypes_fails) {
  conform_run_t r = conform("refuse-all-claims", "--case 'cap.*'");
  cr_assert_eq(r.status, 1, "%s", r.output);
  char line[4096];
  cr_assert(strstr(result_line(&r, "cap.float64", line, sizeof line),
                   "claims float64 (PARITY_DEVICE_FLAG_FLOAT64) but supports none of the f64 probe ops"),
            "%s", line);
  cr_assert(strstr(result_line(&r, "cap.dtypes", line, sizeof line), "dtype_mask claims f32, f64, f16, bf16"), "%s",
            line);
  cr_assert(strstr(r.output, "verdict fault: FAIL: 2 of "), "%s", r.output);
  conform_free(&r);
}

Test(conform, mutant_sum_of_negative_zeros_returning_positive_zero_fails) {
  expect_caught("positive-zero-sum", "--op sum --dtype f32 --direction forward --case neg-zero",
                "sum.f32.forward.neg-zero", "sign of zero: a sum of -0s is -0");
}

Test(conform, mutant_bf16_sum_stored_by_truncation_fails) {
  expect_caught("bf16-truncate", "--op sum --dtype bf16 --direction forward", "sum.bf16.forward.pos4099",
                "not a correctly rounded bf16 store of an f32 result");
}

Test(conform, mutant_f16_add_stored_by_truncation_fails) {
  expect_caught("lowp-truncate", "--op add --dtype f16 --direction forward", "add.f16.forward.n33",
                "exact in f32: must be the correctly rounded f16 result");
}

Test(conform, mutant_broadcast_operand_read_as_contiguous_fails_the_wide_broadcast) {
  expect_caught("bcast-contiguous", "--op add --dtype f32 --direction forward", "add.f32.forward.bcast-wide",
                "must match bit for bit");
}

/* A binary op written as c = a, then c op= b: right out of place and in place into a, wrong in
 * place into b (c is b, so b holds a when it is read). Only the in-place-b case shows it; before
 * the in-place cases (2026-12-07) no case aliased an output, and this plugin passed. */
Test(conform, mutant_binary_copying_its_first_operand_first_fails_in_place_into_the_second) {
  expect_caught("inplace-copy-first", "--op sub --dtype f32 --direction forward", "sub.f32.forward.in-place-b",
                "must match bit for bit");
}

Test(conform, mutant_sigmoid_flushed_below_minus_88_7_fails_the_edge_values) {
  expect_caught("sigmoid-underflow", "--op sigmoid --dtype f32 --direction forward", "sigmoid.f32.forward.edge",
                "ulp, bound");
}

Test(conform, mutant_exp_flushing_subnormal_results_fails_the_edge_values) {
  expect_caught("exp-flush", "--op exp --dtype f32 --direction forward", "exp.f32.forward.edge", "ulp, bound");
}

Test(conform, mutant_pow_gradient_nan_at_zero_fails_the_edge_values) {
  expect_caught("pow-grad-nan", "--op pow --dtype f32 --direction backward", "pow.f32.backward.edge",
                "da[0]: got -nan, expected 0");
}

Test(conform, mutant_cast_rounding_toward_zero_fails_the_ties) {
  expect_caught("cast-rtz", "--op cast --dtype f32 --case ties", "cast.f32->bf16.forward.ties",
                "must match bit for bit");
  expect_caught("cast-rtz", "--op cast --dtype f64 --case ties", "cast.f64->f16.forward.ties",
                "must match bit for bit");
}

/* ---- reports ------------------------------------------------------------------------------- */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return strdup("");
  char *s = slurp_stream(f);
  fclose(f);
  return s;
}

Test(conform, junit_and_html_reports_carry_failures_plots_commands_and_the_seed) {
  char junit[] = "/tmp/parity-conform-junit-XXXXXX", html[] = "/tmp/parity-conform-html-XXXXXX";
  close(mkstemp(junit));
  close(mkstemp(html));
  char args[512];
  snprintf(args, sizeof args, "--op sum --dtype f32 --direction forward --seed 7 --junit '%s' --html '%s'", junit,
           html);
  conform_run_t r = conform("drop-partial", args);
  cr_assert_eq(r.status, 1, "%s", r.output);
  char *x = read_file(junit), *h = read_file(html);
  cr_assert(strstr(x, "<testsuite name=\"fault\""), "%s", x);
  cr_assert(strstr(x, "name=\"sum.f32.forward.spikes\" time="), "%s", x);
  cr_assert(strstr(x, "<failure message=\"1 of 1 elements of y outside the rule"), "%s", x);
  cr_assert(strstr(x, "<property name=\"seed\" value=\"7\"/>"), "%s", x);
  cr_assert(strstr(x, "--case &apos;sum.f32.forward.spikes&apos; --seed 7"), "%s", x);
  cr_assert(strstr(h, "Seed <b>7</b>"), "the seed is in the report");
  cr_assert(strstr(h, "<h4>sum.f32.forward.spikes</h4>"), "every failure has a section");
  cr_assert_geq(count(h, "<svg "), 2, "an error-distribution plot per failing case");
  cr_assert(strstr(h, "--case &apos;") == NULL && strstr(h, "--case 'sum.f32.forward.spikes' --seed 7"),
            "reproduce commands as printed");
  cr_assert(strstr(h, "class=hm"), "the heatmap");
  cr_assert(!strstr(h, "<script") && !strstr(h, " src=") && !strstr(h, "<link"), "self-contained: nothing to fetch");
  free(x);
  free(h);
  unlink(junit);
  unlink(html);
  conform_free(&r);
}

Test(conform, mutant_f64_cast_rounding_twice_through_f32_fails_the_ulp_beside_a_tie) {
  expect_caught("cast-double-round", "--op cast --dtype f64 --case ties", "cast.f64->f16.forward.ties",
                "must match bit for bit");
}

Test(conform, mutant_matmul_losing_a_k_tile_fails_the_long_positive_matmul) {
  expect_caught("matmul-drop-ktile", "--op matmul --dtype f32 --direction forward", "matmul.f32.forward.k4097-pos",
                "outside the rule");
}

Test(conform, a_passing_default_run_prints_a_summary_not_a_table) {
  conform_run_t r = conform("", "");
  cr_assert_eq(r.status, 0, "%s", r.output);
  cr_assert_lt(count(r.output, "\n"), 25, "a passing backend prints its table and verdict:\n%s", r.output);
  cr_assert_eq(count(r.output, "verdict fault: PASS on "), 1, "%s", r.output);
  conform_free(&r);
}

Test(conform, mutant_maximum_dropping_nan_in_the_second_operand_fails_special) {
  expect_caught("maximum-nan-second", "--op maximum --dtype f32 --direction forward --case special",
                "maximum.f32.forward.special", "must match bit for bit");
}

Test(conform, a_plugin_that_runs_little_keeps_the_console_short) {
  conform_run_t r = conform("lie-dtypes", "");
  cr_assert_eq(r.status, 1, "%s", r.output);
  cr_assert(strstr(r.output, "more ops (--verbose lists them all; --support gives every reason)"), "%s", r.output);
  cr_assert_lt(count(r.output, "\n"), 45, "%s", r.output);
  conform_free(&r);
}

Test(conform, mutant_wide_strided_input_read_as_dense_fails_the_wide_view) {
  expect_caught("strided-wide", "--op exp --dtype f32 --direction forward", "exp.f32.forward.view-wide",
                "outside the rule");
}

Test(conform, mutant_softmax_shifting_by_the_mean_fails_rows_far_apart) {
  expect_caught("softmax-mean-shift", "--op softmax --dtype f32 --direction forward --case far,offset1000",
                "softmax.f32.forward.far", "outside the rule");
}

Test(conform, shards_partition_the_selection) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --list --full", PARITY_CONFORM_EXE);
  conform_run_t all = run_command(cmd);
  int total = count(all.output, "\n"), sum = 0;
  for (int k = 0; k < 3; k++) {
    snprintf(cmd, sizeof cmd, "'%s' --list --full --shard %d/3", PARITY_CONFORM_EXE, k);
    conform_run_t part = run_command(cmd);
    cr_assert_eq(part.status, 0, "%s", part.output);
    sum += count(part.output, "\n");
    for (const char *line = part.output; *line; line = strchr(line, '\n') + 1) { /* every id in the whole list */
      char id[160];
      snprintf(id, sizeof id, "\n%.*s\n", (int)strcspn(line, "\n"), line);
      cr_assert(strstr(all.output, id + 1) != NULL, "shard %d lists %s, which the full list lacks", k, id + 1);
    }
    conform_free(&part);
  }
  cr_assert_eq(sum, total, "the shards together list every case once: %d vs %d", sum, total);
  conform_free(&all);
}

/* The big cases of a --full sweep are most of its time (sum over 2^31 bools about twelve times an
 * exp over 2^24 floats): the two halves CI runs at once must each hold about half of that work.
 * Every second row of the table, the rule before, gave them 14 and 30 such units. */
static int big_case_work(const char *list) {
  int w = 0;
  for (const char *line = list; *line; line = strchr(line, '\n') + 1) {
    size_t n = strcspn(line, "\n");
    const char *v = line + n;
    while (v > line && v[-1] != '.') v--;
    size_t vn = (size_t)(line + n - v);
    if (vn == 4 && !strncmp(v, "huge", 4))
      w += 12;
    else if ((vn == 5 && !strncmp(v, "large", 5)) || (vn == 11 && !strncmp(v, "large-mixed", 11)) ||
             (vn == 10 && !strncmp(v, "huge-bcast", 10)))
      w += 1;
    if (!line[n]) break;
  }
  return w;
}

Test(conform, the_halves_of_the_full_sweep_hold_about_equal_work) {
  char cmd[1024];
  int work[2];
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof cmd, "'%s' --list --full-extra --shard %d/2", PARITY_CONFORM_EXE, k);
    conform_run_t part = run_command(cmd);
    cr_assert_eq(part.status, 0, "%s", part.output);
    work[k] = big_case_work(part.output);
    conform_free(&part);
  }
  cr_assert(work[0] + work[1] >= 30, "the --full sweep lost its big cases (%d units)", work[0] + work[1]);
  cr_assert(abs(work[0] - work[1]) <= 4, "the halves hold %d and %d units of the big cases' work", work[0], work[1]);
}

/* Whether `line` is a whole line of `text`. */
static int has_line(const char *text, const char *line, size_t n) {
  for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
    if ((p == text || p[-1] == '\n') && strncmp(p, line, n) == 0 && (p[n] == '\n' || !p[n])) return 1;
  return 0;
}

/* --full-extra is --full less the default subset: together with a default run, every case once. */
Test(conform, full_extra_is_the_full_sweep_less_the_default_subset) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --list --full", PARITY_CONFORM_EXE);
  conform_run_t all = run_command(cmd);
  snprintf(cmd, sizeof cmd, "'%s' --list", PARITY_CONFORM_EXE);
  conform_run_t quick = run_command(cmd);
  snprintf(cmd, sizeof cmd, "'%s' --list --full-extra", PARITY_CONFORM_EXE);
  conform_run_t extra = run_command(cmd);
  cr_assert_eq(extra.status, 0, "%s", extra.output);
  int n_extra = count(extra.output, "\n"), n_quick = count(quick.output, "\n"), n_all = count(all.output, "\n");
  cr_assert_gt(n_extra, 0);
  cr_assert_gt(n_quick, 0);
  cr_assert_eq(n_extra + n_quick, n_all, "%d extra + %d default vs %d in --full", n_extra, n_quick, n_all);
  for (const char *line = extra.output; *line; line = strchr(line, '\n') + 1) {
    char id[160];
    size_t n = strcspn(line, "\n");
    snprintf(id, sizeof id, "%.*s", (int)n, line);
    cr_assert(has_line(all.output, id, n), "--full-extra lists %s, which --full lacks", id);
    cr_assert(!has_line(quick.output, id, n), "--full-extra lists %s, a default-subset case", id);
  }
  conform_free(&all);
  conform_free(&quick);
  conform_free(&extra);
}

/* Which NaN an operation on two NaNs returns is left open (docs/conformance.md, Determinism): a
 * plugin whose NaN signs change from call to call passes, and an element left unwritten still
 * fails the determinism check although both sentinels read as NaN in f16. */
Test(conform, nan_signs_that_change_between_calls_pass_the_determinism_check) {
  conform_run_t run = conform("nan-sign-flips", "--op add,mul,neg --dtype f32,f64,f16 --case special");
  cr_assert_eq(run.status, 0, "NaN signs that change must pass:\n%s", run.output);
  cr_assert_eq(count(run.json, "\"status\":\"pass\""), 9, "%s", run.output);
  conform_free(&run);
}

Test(conform, an_unwritten_f16_element_fails_though_both_sentinels_read_as_nan) {
  expect_caught("nan-sign-unwritten", "--op add --dtype f16 --case special", "add.f16.forward.special",
                "nondeterministic");
}
