/* parallel_unit.c — when the CPU plugin splits a reduction over threads (plugins/cpu/
 * cpu_parallel.h): never below the element limit, always at a fork/join cost of 0, and otherwise
 * only where the serial read takes longer than the cost times P / (P - 1); and the parsing of
 * PARITY_CPU_FORK_JOIN_NS. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_parallel.h"

#define F32 4
#define F64 8

Test(cpu_reduce_threads, never_below_the_element_limit_or_with_one_thread) {
  const int64_t below = CPU_PARALLEL_MIN_ELEMENTS - 1;
  cr_assert_eq(cpu_reduce_threads_for(below, below * F64, 2, 0), 1);
  cr_assert_eq(cpu_reduce_threads_for(below, INT64_C(1) << 40, 4, 1), 1);
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 30, INT64_C(1) << 32, 1, 0), 1);
}

Test(cpu_reduce_threads, a_free_fork_join_keeps_the_element_limit) {
  const int64_t n = CPU_PARALLEL_MIN_ELEMENTS;
  cr_assert_eq(cpu_reduce_threads_for(n, n * F32, 2, 0), 2);
  cr_assert_eq(cpu_reduce_threads_for(n, n * F32, 3, 0), 3);
}

Test(cpu_reduce_threads, splits_only_where_the_serial_read_outlasts_the_fork_join) {
  /* this VM: 3 us per fork/join on 2 threads. 2^17 f32 (512 KB, 4 us read): one thread; 2^18 f32
   * (1 MB, 8 us): two. The break-even is 3000 * 2 / 1 * 128 = 768000 bytes. */
  const int64_t fj = 3000;
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 17, (INT64_C(1) << 17) * F32, 2, fj), 1);
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 18, (INT64_C(1) << 18) * F32, 2, fj), 2);
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 16, 768000, 2, fj), 1);
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 16, 768000 + CPU_REDUCE_BYTES_PER_NS, 2, fj), 2);
  /* bytes, not elements: 2^17 f64 reads 1 MB */
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 17, (INT64_C(1) << 17) * F64, 2, fj), 2);
  /* four threads gain from a third less serial time: 3000 * 4 / 3 * 128 = 512000 bytes */
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 16, 512000, 4, fj), 1);
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 16, 512000 + CPU_REDUCE_BYTES_PER_NS, 4, fj), 4);
  /* a bare-metal 0.3 us: the element limit decides */
  cr_assert_eq(cpu_reduce_threads_for(CPU_PARALLEL_MIN_ELEMENTS, CPU_PARALLEL_MIN_ELEMENTS * F32, 2, 300), 2);
  /* a cost of a second: even 64 GB stays on one thread */
  cr_assert_eq(cpu_reduce_threads_for(INT64_C(1) << 34, INT64_C(1) << 36, 2, 1000000000), 1);
}

Test(cpu_fork_join_ns, parses_whole_nanoseconds_from_0_to_a_second) {
  static const struct {
    const char *text;
    int64_t v;
  } good[] = {{"0", 0}, {"3000", 3000}, {"1000000000", 1000000000}, {"007", 7}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    int64_t v = -1;
    char msg[256] = "";
    cr_assert_eq(cpu_parse_fork_join_ns(good[i].text, &v, msg, sizeof msg), 0, "'%s': %s", good[i].text, msg);
    cr_assert_eq(v, good[i].v, "'%s'", good[i].text);
  }
}

Test(cpu_fork_join_ns, refuses_anything_else_with_the_value_and_the_range) {
  static const char *const bad[] = {
      "", "-1", "+5", " 5", "5 ", "3us", "abc", "1000000001", "99999999999999999999999", "0x10", "1e3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int64_t v = 42;
    char msg[256] = "", want[64];
    cr_assert_eq(cpu_parse_fork_join_ns(bad[i], &v, msg, sizeof msg), -1, "'%s' accepted", bad[i]);
    cr_assert_eq(v, 42, "'%s' wrote the result", bad[i]);
    snprintf(want, sizeof want, "PARITY_CPU_FORK_JOIN_NS='%s' is not", bad[i]);
    cr_assert(strstr(msg, want) && strstr(msg, "from 0 to 1000000000"), "'%s': %s", bad[i], msg);
  }
}

/* Other work (gemm, elementwise): split when the time saved, serial * (1 - 1 / speed-up), beats the
 * fork/join cost of a team that has gone to sleep (issue 37: the MLP's 25.7 MFLOP gemms, about
 * 170 us on one thread here, saved less than the 80 us wake-up on two threads and now run on one). */
Test(cpu_split_threads, splits_only_where_the_saving_beats_the_wake_up) {
  /* two threads at efficiency 0.5: speed-up 1.5, a third of the serial time saved */
  cr_assert_eq(cpu_split_threads_for(171000, 0.5, 2, 80000), 1);
  cr_assert_eq(cpu_split_threads_for(241000, 0.5, 2, 80000), 2);
  cr_assert_eq(cpu_split_threads_for(239000, 0.5, 2, 80000), 1); /* just below break-even (240 us) */
  /* a 1024^3 gemm (14 ms) always splits; a free fork/join always splits; one thread never */
  cr_assert_eq(cpu_split_threads_for(14e6, 0.5, 2, 80000), 2);
  cr_assert_eq(cpu_split_threads_for(1000, 0.5, 2, 0), 2);
  cr_assert_eq(cpu_split_threads_for(1e12, 1.0, 1, 0), 1);
  /* more threads save more: four at efficiency 1 save three quarters */
  cr_assert_eq(cpu_split_threads_for(110000, 1.0, 4, 80000), 4);
  cr_assert_eq(cpu_split_threads_for(100000, 1.0, 4, 80000), 1);
}
