/* parity-train --predictions and the predictions hash (docs/training.md, "Output"):
 * - one MLP epoch on Fashion-MNIST on cpu with the documented settings (OMP_NUM_THREADS=2; the avx2
 *   path, which gives the avx512 path's bits, and avx512 on one thread where the CPU runs it) prints
 *   the pinned accuracy and hash, and the --predictions file holds one "index class" line per test
 *   image whose classes hash, as the docs say, to the same value;
 * - a target that is a folder, a device, /proc or in a missing folder is refused before any work
 *   (exit 2, the message names the option and the file);
 * - an existing file is left byte for byte when the run is refused, fails before the end, or its
 *   write fails (a file-size limit, as on a full disk), and no temporary file is left.
 * The pinned run needs the dataset (and fails naming the package without it, as test_fashion.c);
 * the rest runs on a tiny generated dataset. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train_files.h"

#define DATA_DIR "/usr/share/datasets/fashion-mnist"
/* docs/training.md, "Measured": the MLP, one epoch, defaults (seed 1), on cpu with
 * OMP_NUM_THREADS=2 (any thread count gives these; the avx512 and avx2 paths give the same bits). */
#define PINNED_LINE "test accuracy 86.29 % (8629/10000) predictions 31404c90816833f5"
#define PINNED_HASH 0x31404c90816833f5ull
#define TEST_IMAGES 10000

static void setup(void) { train_dir_make("pred"); }
TestSuite(predictions, .init = setup, .fini = train_dir_remove);

/* 64 training and 300 test images (the predictions file of 300 lines is about 2 KB). */
#define TINY_TEST 300
static void make_tiny_dataset(void) { tiny_dataset(64, TINY_TEST); }

typedef struct run_out {
  int status; /* exit status, or 1000 + signal */
  char text[1 << 15];
} run_out;

/* parity-train ARGS on the CPU plugin with ENV ("VAR=value ..." or ""), stdout and stderr
 * together. fsize >= 0: the child's RLIMIT_FSIZE, SIGXFSZ ignored (writes fail with EFBIG). */
static run_out *run_limited(const char *env, const char *args, long long fsize) {
  run_out *r = calloc(1, sizeof *r);
  cr_assert_not_null(r);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "exec env PARITY_LOG=quiet PARITY_PLUGIN_PATH= PARITY_BACKEND=cpu %s '%s/parity-train' %s",
           env, PARITY_BIN_DIR, args);
  int pfd[2];
  cr_assert_eq(pipe(pfd), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    close(pfd[0]);
    dup2(pfd[1], 1);
    dup2(pfd[1], 2);
    close(pfd[1]);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    if (fsize >= 0) {
      struct rlimit fl = {(rlim_t)fsize, (rlim_t)fsize};
      setrlimit(RLIMIT_FSIZE, &fl);
      signal(SIGXFSZ, SIG_IGN); /* kept across exec */
    }
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(pfd[1]);
  size_t used = 0;
  ssize_t k;
  while (used + 1 < sizeof r->text && (k = read(pfd[0], r->text + used, sizeof r->text - 1 - used)) > 0)
    used += (size_t)k;
  char sink[4096];
  while (read(pfd[0], sink, sizeof sink) > 0) {}
  r->text[used] = 0;
  close(pfd[0]);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

static run_out *run(const char *env, const char *args) { return run_limited(env, args, -1); }

/* No "*.tmp.*" file of the atomic writer is left in train_dir. */
static void no_temporary_left(void) {
  DIR *d = opendir(train_dir);
  cr_assert_not_null(d);
  struct dirent *e;
  while ((e = readdir(d))) cr_assert_null(strstr(e->d_name, ".tmp."), "a temporary file is left: %s", e->d_name);
  closedir(d);
}

/* The predictions hash as docs/training.md defines it, from a --predictions file: FNV-1a 64
 * (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over one byte per line, the class as a
 * number 0..9, in the file's (= the test set's) order. Checks the format on the way: "index class"
 * per line, the index counting from 0. *lines: how many. */
static uint64_t hash_of_file(const char *p, size_t *lines) {
  char *text = read_file(p, NULL);
  uint64_t h = 0xcbf29ce484222325ull;
  size_t n = 0;
  for (char *s = text; *s; n++) {
    char *nl = strchr(s, '\n');
    cr_assert_not_null(nl, "%s: line %zu has no newline", p, n + 1);
    *nl = 0;
    unsigned long idx;
    unsigned cls;
    char extra;
    cr_assert_eq(sscanf(s, "%lu %u%c", &idx, &cls, &extra), 2, "%s: line %zu is '%s', not 'index class'", p, n + 1, s);
    cr_assert_eq(idx, n, "%s: line %zu has index %lu", p, n + 1, idx);
    cr_assert_leq(cls, 9u, "%s: line %zu has class %u", p, n + 1, cls);
    h = (h ^ (uint8_t)cls) * 0x100000001b3ull;
    s = nl + 1;
  }
  free(text);
  *lines = n;
  return h;
}

static int path_unavailable(const run_out *r) { return r->status != 0 && strstr(r->text, "cannot run here"); }

Test(predictions, one_mlp_epoch_on_cpu_gives_the_pinned_hash_and_the_file_hashes_to_it, .timeout = 300) {
  struct stat s;
  if (stat(DATA_DIR "/train-images-idx3-ubyte.gz", &s) != 0)
    cr_assert_fail("Fashion-MNIST is not installed in " DATA_DIR
                   ": apt-get install dataset-fashion-mnist "
                   "(make test and tools/install-deps.sh install it)");
  /* the documented thread count on the avx2 path (the bits of the avx512 path, which the CPU plugin
     picks where the CPU has it), then avx512 on one thread: the thread count changes nothing */
  static const char *const envs[] = {"OMP_NUM_THREADS=2 PARITY_CPU_ISA=avx2",
                                     "OMP_NUM_THREADS=1 PARITY_CPU_ISA=avx512"};
  int ran = 0;
  for (int i = 0; i < 2; i++) {
    const char *p = path_of(i ? "p-avx512.txt" : "p-avx2.txt");
    write_bytes(p, "an older file\n", 14); /* replaced at the end */
    char args[512];
    snprintf(args, sizeof args, "--data fashion-mnist --log-every 100000 --predictions %s", p);
    run_out *r = run(envs[i], args);
    if (path_unavailable(r)) { /* a CPU without that kernel path */
      /* (not cr_log_warn: Criterion leaks the lines of a several-line message, which fails this test
       * under LeakSanitizer) */
      fprintf(stderr, "%s: skipped, this CPU lacks the path:\n%s", envs[i], r->text);
      free(r);
      continue;
    }
    cr_assert_eq(r->status, 0, "%s parity-train %s: exit %d:\n%s", envs[i], args, r->status, r->text);
    cr_assert_not_null(strstr(r->text, PINNED_LINE),
                       "%s: the MLP's epoch no longer gives the figure docs/training.md states (%s); if a kernel "
                       "change is meant to change it, update the docs' figures and this test:\n%s",
                       envs[i], PINNED_LINE, r->text);
    size_t lines;
    uint64_t h = hash_of_file(p, &lines);
    cr_assert_eq(lines, TEST_IMAGES, "%s: %zu lines", p, lines);
    cr_assert_eq(h, PINNED_HASH, "%s hashes to %016llx, the run printed %016llx", p, (unsigned long long)h,
                 (unsigned long long)PINNED_HASH);
    free(r);
    ran++;
  }
  no_temporary_left();
  if (!ran) cr_skip_test("neither the avx2 nor the avx512 kernel path runs here: the hash is pinned for those paths");
}

Test(predictions, a_bad_target_is_refused_before_any_work, .timeout = 60) {
  const char *fifo = path_of("fifo");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *targets[] = {train_dir, "/dev/null", "/nonexistent-parity-dir/p.txt", "/proc/version", fifo};
  const char *why[] = {"folder", "device", "nonexistent-parity-dir", "/proc/version", "FIFO"};
  for (int i = 0; i < 5; i++) {
    char args[512];
    /* a data folder that does not exist: a target checked late would fail there instead (exit 1) */
    snprintf(args, sizeof args, "--data fashion-mnist --data-dir /nonexistent-parity-data --predictions %s",
             targets[i]);
    run_out *r = run("", args);
    cr_assert_eq(r->status, 2, "--predictions %s: exit %d, expected 2:\n%s", targets[i], r->status, r->text);
    char want[256];
    snprintf(want, sizeof want, "--predictions: cannot write '%s'", targets[i]);
    cr_assert_not_null(strstr(r->text, want), "--predictions %s: the message lacks '%s':\n%s", targets[i], want,
                       r->text);
    cr_assert_not_null(strstr(r->text, why[i]), "--predictions %s: the message says '%s':\n%s", targets[i], why[i],
                       r->text);
    cr_assert_null(strstr(r->text, "nonexistent-parity-data"), "--predictions %s: refused before the data:\n%s",
                   targets[i], r->text);
    free(r);
  }
  struct stat s;
  cr_assert_eq(stat("/dev/null", &s), 0);
  cr_assert(S_ISCHR(s.st_mode), "/dev/null is still a device");
  static const char *const usage[][2] = {
      {"--predictions p.txt", "--predictions applies only with --data fashion-mnist"},
      {"--data fashion-mnist --predictions ''", "--predictions needs a file name"},
      {"--data fashion-mnist --predictions", "--predictions needs a value"},
  };
  for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
    run_out *r = run("", usage[i][0]);
    cr_assert_eq(r->status, 2, "parity-train %s: exit %d:\n%s", usage[i][0], r->status, r->text);
    cr_assert_not_null(strstr(r->text, usage[i][1]), "parity-train %s: lacks '%s':\n%s", usage[i][0], usage[i][1],
                       r->text);
    free(r);
  }
}

Test(predictions, an_existing_file_is_kept_when_refused_failing_or_its_write_fails, .timeout = 120) {
  make_tiny_dataset();
  const char *keep = path_of("keep.txt"), *link = path_of("link.txt");
  static const char old[] = "the previous predictions\n";
  write_bytes(keep, old, sizeof old - 1);
  cr_assert_eq(symlink(keep, link), 0);
  char args[1024];
  struct {
    const char *extra; /* after --predictions KEEP */
    int status;
    const char *message;
  } cases[] = {
      {"--save %s", 2, "--predictions and --save name the same file"},
      {"--load %s", 2, "--predictions and --load name the same file"},
      {"--lr abc", 2, "--lr='abc' is not a number"},
      {"--data-dir /nonexistent-parity-data", 1, "/nonexistent-parity-data/train-images-idx3-ubyte.gz: cannot open"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char extra[600];
    snprintf(extra, sizeof extra, cases[i].extra, i == 1 ? link : keep); /* --load through a link: the same file */
    snprintf(args, sizeof args, "--data fashion-mnist --data-dir %s --predictions %s %s", train_dir, keep, extra);
    run_out *r = run("", args);
    cr_assert_eq(r->status, cases[i].status, "parity-train %s: exit %d, expected %d:\n%s", args, r->status,
                 cases[i].status, r->text);
    cr_assert_not_null(strstr(r->text, cases[i].message), "parity-train %s: lacks '%s':\n%s", args, cases[i].message,
                       r->text);
    cr_assert_str_eq(read_file(keep, NULL), old, "parity-train %s changed %s", args, keep);
    free(r);
  }
  /* the write fails at the end (EFBIG: a 1 KB file-size limit; the file is about 2 KB): exit 1,
     the old file byte for byte, no temporary file */
  snprintf(args, sizeof args, "--data fashion-mnist --data-dir %s --epochs 1 --predictions %s", train_dir, keep);
  run_out *r = run_limited("", args, 1024);
  cr_assert_eq(r->status, 1, "exit %d under a 1 KB file-size limit:\n%s", r->status, r->text);
  cr_assert_not_null(strstr(r->text, "--predictions: cannot write"), "%s", r->text);
  cr_assert_not_null(strstr(r->text, "the previous file, if any, is unchanged"), "%s", r->text);
  cr_assert_str_eq(read_file(keep, NULL), old);
  no_temporary_left();
  free(r);
  /* and without the limit the file is replaced: one line per test image, through the link too */
  snprintf(args, sizeof args, "--data fashion-mnist --data-dir %s --epochs 1 --predictions %s", train_dir, link);
  r = run("", args);
  cr_assert_eq(r->status, 0, "exit %d:\n%s", r->status, r->text);
  size_t lines;
  uint64_t h = hash_of_file(keep, &lines);
  cr_assert_eq(lines, TINY_TEST);
  char printed[32];
  snprintf(printed, sizeof printed, "predictions %016llx", (unsigned long long)h);
  cr_assert_not_null(strstr(r->text, printed), "the file hashes to %016llx; the run printed:\n%s",
                     (unsigned long long)h, r->text);
  struct stat s;
  cr_assert_eq(lstat(link, &s), 0);
  cr_assert(S_ISLNK(s.st_mode), "the link is kept; the file it names was replaced");
  no_temporary_left();
  free(r);
}
