/* cpu_parallel.h — whether a kernel is worth splitting over OpenMP threads (a reduction, a gemm,
 * an elementwise pass), weighed against the measured cost of starting a team, which with
 * libparity's short OpenMP spin is mostly the cost of waking one (docs/cpu-kernels.md, "Threads").
 *
 * Starting and joining a team of threads costs about 0.3 us on a quiet bare-metal machine and
 * 3 us on this project's 2-core VM (an empty `omp parallel` on two threads). A reduction reads
 * its input at cache speed (100-200 GB/s on one core), so below a few hundred KB that cost is
 * more than the half of the reading a second thread would take: two threads ran a sum of 2^17
 * f32 at 74-81 GB/s where one thread ran it at 177-198, and max over 2^16 at 41-47 against 138.
 * So a reduction is split only when its serial pass would take longer than the fork/join cost
 * times threads / (threads - 1) (where the split starts to gain), and never below
 * CPU_PARALLEL_MIN_ELEMENTS elements (the limit every kernel family uses). The forward's pass
 * reads its elements; the backward's writes dx and reads x or dy, counted as twice the bytes.
 *
 * The cost is measured once per process, when the first reduction large enough to be split
 * runs (a few dozen empty parallel regions, about 0.1 ms here), or taken from
 * PARITY_CPU_FORK_JOIN_NS (read at plugin init; 0 keeps the plain element limit). The thread
 * count never changes a result (cpu_accum.h), so the measurement changes speed only. */
#ifndef PARITY_CPU_PARALLEL_H
#define PARITY_CPU_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* A reduction's serial read, in bytes per ns, that the split is weighed against: one core
 * reading from its L2 (this VM: 120-200). Higher would split later; it is a nominal rate. */
#define CPU_REDUCE_BYTES_PER_NS 128

/* Threads for a reduction pass moving `bytes` over `elements` elements, given at most
 * `max_threads` threads and a fork/join cost of fork_join_ns: max_threads or 1. */
int cpu_reduce_threads_for(int64_t elements, int64_t bytes, int max_threads, int64_t fork_join_ns);

/* The same with this process's fork/join cost (measured on first need) and OpenMP's thread count. */
int cpu_reduce_threads(int64_t elements, int64_t bytes);

/* Threads for other work (a gemm, an elementwise pass) estimated at serial_ns on one thread,
 * whose split runs at `efficiency` of the ideal speed-up (1 + efficiency * (threads - 1)):
 * max_threads when the time the split saves exceeds the fork/join cost, else 1. A compute-bound
 * gemm on two cores of this VM ran 1.5x faster on two threads (efficiency 0.5). */
int cpu_split_threads_for(double serial_ns, double efficiency, int max_threads, int64_t fork_join_ns);
/* The same with this process's fork/join cost and OpenMP's thread count. */
int cpu_split_threads(double serial_ns, double efficiency);

/* Parse a PARITY_CPU_FORK_JOIN_NS value: 0 with *out set, or -1 with msg[n] saying why. */
int cpu_parse_fork_join_ns(const char *text, int64_t *out, char *msg, size_t n);

/* Plugin init: read PARITY_CPU_FORK_JOIN_NS (a malformed value is logged as a warning and the
 * cost measured instead). */
void cpu_parallel_init(void);

/* The fork/join cost in use, in ns: the override, the measurement, or -1 before either. */
int64_t cpu_fork_join_ns(void);

#endif
