/* check_launch.c — a launch under the checker: its configuration (the environment), every block
 * in turn through the scheduler, the reports, and the counters the tests read. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct {
  unsigned x, y, z;
} chk_dim3;
extern chk_dim3 emu_blockIdx, emu_blockDim, emu_gridDim;

chk_config_t chk_config = {1, 2};
chk_words_t chk_words = {"cuda-check",
                         "block",
                         "blocks",
                         "thread",
                         "threads",
                         "shared",
                         "PARITY_CUDA_CHECK_SEED",
                         "PARITY_CUDA_CHECK_SWITCH",
                         "CUDA_CHECK_STATS"};
chk_stats_t chk_stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t serial;
static char failure[512];

/* a whole number in [lo, hi] from the environment, or the default when unset */
static int env_number(const char *name, uint64_t lo, uint64_t hi, uint64_t *v, char *msg, size_t n) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (*s == '-' || *s == '+' || errno || !end || *end || x < lo || x > hi) {
    snprintf(msg, n, "%s='%s' is not a whole number in [%llu, %llu]", name, s, (unsigned long long)lo,
             (unsigned long long)hi);
    return -1;
  }
  *v = x;
  return 0;
}

int chk_configure(char *msg, size_t n) {
  uint64_t seed = 1, every = 2;
  if (env_number(chk_words.seed_env, 0, UINT64_MAX, &seed, msg, n) != 0 ||
      env_number(chk_words.switch_env, 1, 1000000, &every, msg, n) != 0)
    return -1;
  chk_config.seed = seed;
  chk_config.switch_every = (unsigned)every;
  return 0;
}

static int prepare(const unsigned grid[3], const unsigned block[3]) {
  unsigned long long n = (unsigned long long)block[0] * block[1] * block[2];
  if (!n || n > CHK_MAX_THREADS || !grid[0] || grid[0] > CHK_MAX_BLOCKS || grid[1] != 1 || grid[2] != 1) {
    const chk_words_t *w = &chk_words;
    snprintf(failure, sizeof failure,
             "%s: launch of %u x %u x %u %s of %u x %u x %u %s: the checker runs 1 to %u %s in x and 1 to %u %s",
             w->tool, grid[0], grid[1], grid[2], w->blocks, block[0], block[1], block[2], w->threads, CHK_MAX_BLOCKS,
             w->blocks, CHK_MAX_THREADS, w->threads);
    return -1;
  }
  if (chk_stacks_init() != 0) {
    snprintf(failure, sizeof failure, "%s: cannot map %u fiber stacks", chk_words.tool, CHK_MAX_THREADS);
    return -1;
  }
  if (chk_shared_init(failure, sizeof failure) != 0) return -1;
  return 0;
}

int chk_launch(const chk_kernel_t *k, const unsigned grid[3], const unsigned block[3], void **params) {
  pthread_mutex_lock(&lock);
  failure[0] = 0;
  if (prepare(grid, block) != 0) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  chk_now = (chk_now_t){.launch = ++serial, .kernel = k, .params = params};
  memcpy(chk_now.block_dim, block, sizeof chk_now.block_dim);
  emu_gridDim = (chk_dim3){grid[0], grid[1], grid[2]};
  emu_blockDim = (chk_dim3){block[0], block[1], block[2]};
  chk_seed(serial);
  chk_reports_begin();
  chk_active = 1;
  for (unsigned b = 0; b < grid[0]; b++) {
    emu_blockIdx = (chk_dim3){b, 0, 0};
    chk_now.block = b;
    chk_run_block(block[0] * block[1] * block[2]);
    chk_stats.blocks++;
  }
  chk_active = 0;
  chk_stats.launches++;
  int count = chk_reports_end();
  pthread_mutex_unlock(&lock);
  return count;
}

const char *chk_failure(void) { return failure; }

void chk_stats_write(void) {
  const char *path = getenv(chk_words.stats_env);
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "launches %llu blocks %llu accesses %llu switches %llu barriers %llu reports %llu\n",
          (unsigned long long)chk_stats.launches, (unsigned long long)chk_stats.blocks,
          (unsigned long long)chk_stats.accesses, (unsigned long long)chk_stats.switches,
          (unsigned long long)chk_stats.barriers, (unsigned long long)chk_stats.reports);
  fclose(f);
}
