/* parity-train --save / --load on a tiny generated dataset (no Fashion-MNIST needed): the save
 * target is checked before any work; a save killed at any byte (file-size limit) or moment
 * (SIGKILL) leaves the old file or the new one, byte for byte, never a mix, and a write that fails
 * (EFBIG, as on a full disk) leaves the old file and no temporary; --load refuses a cut,
 * mixed or bit-flipped file, a file of the other model (naming both), NaN/Inf weights (unless
 * --allow-nonfinite), and accepts a file without parity's checksum with a note. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train_files.h"

static void setup(void) { train_dir_make("save"); }
TestSuite(save, .init = setup, .fini = train_dir_remove);

static void make_dataset(void) { tiny_dataset(64, 10); }

typedef struct run_out {
  int status; /* exit status, or 1000 + signal */
  double ms;
  char text[16384];
} run_out;

/* parity-train --data fashion-mnist --data-dir <train_dir> ARGS on the CPU plugin. fsize >= 0: the
 * child's RLIMIT_FSIZE. kill_at: when > 0, SIGKILL once a temporary file (".tmp.") in train_dir holds
 * at least kill_at - 1 bytes (1: as soon as it appears); when < 0, SIGKILL -kill_at microseconds
 * after the start. */
static int ignore_xfsz;

static run_out run_limited(const char *args, long long fsize, long long kill_at) {
  run_out r = {0};
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "exec '%s/parity-train' --data fashion-mnist --data-dir '%s' --test-images 10 %s",
           PARITY_BIN_DIR, train_dir, args);
  int pfd[2];
  cr_assert_eq(pipe(pfd), 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    close(pfd[0]);
    dup2(pfd[1], 1);
    dup2(pfd[1], 2);
    close(pfd[1]);
    setenv("PARITY_BACKEND", "cpu", 1);
    setenv("PARITY_LOG", "quiet", 1);
    setenv("PARITY_PLUGIN_PATH", "", 1);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    if (fsize >= 0) {
      struct rlimit fl = {(rlim_t)fsize, (rlim_t)fsize};
      setrlimit(RLIMIT_FSIZE, &fl);
    }
    if (ignore_xfsz) signal(SIGXFSZ, SIG_IGN); /* kept across exec: writes fail with EFBIG, as on a full disk */
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(pfd[1]);
  if (kill_at != 0) {
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    for (int done = 0; !done;) {
      char tmp[256];
      ssize_t k = read(pfd[0], tmp, sizeof tmp); /* keep the pipe drained */
      if (k > 0) {
        size_t used = strlen(r.text);
        snprintf(r.text + used, sizeof r.text - used, "%.*s", (int)k, tmp);
      }
      siginfo_t si = {0};
      if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) break;
      if (kill_at < 0) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000LL + (t.tv_nsec - t0.tv_nsec) / 1000 >= -kill_at) {
          kill(pid, SIGKILL);
          break;
        }
        usleep(100);
        continue;
      }
      DIR *d = opendir(train_dir);
      struct dirent *e;
      while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) {
          struct stat s;
          if (stat(path_of(e->d_name), &s) == 0 && s.st_size >= kill_at - 1) {
            kill(pid, SIGKILL);
            done = 1;
          }
        }
      if (d) closedir(d);
    }
    fcntl(pfd[0], F_SETFL, 0);
  }
  size_t used = strlen(r.text);
  ssize_t k;
  while (used + 1 < sizeof r.text && (k = read(pfd[0], r.text + used, sizeof r.text - 1 - used)) > 0) used += (size_t)k;
  r.text[used] = 0;
  close(pfd[0]);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  r.ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

static run_out run(const char *args) { return run_limited(args, -1, 0); }

static void expect_ok(const char *args) {
  run_out r = run(args);
  cr_assert_eq(r.status, 0, "parity-train %s: exit %d:\n%s", args, r.status, r.text);
}

static void expect_refused(const char *args, const char *want, const char *want2) {
  run_out r = run(args);
  cr_assert(r.status != 0 && r.status < 1000, "parity-train %s: exit %d, expected a refusal:\n%s", args, r.status,
            r.text);
  cr_assert_not_null(strstr(r.text, want), "parity-train %s: the message lacks '%s':\n%s", args, want, r.text);
  if (want2)
    cr_assert_not_null(strstr(r.text, want2), "parity-train %s: the message lacks '%s':\n%s", args, want2, r.text);
}

/* Save seed 1's and seed 2's initial MLP weights: *old_b in W, *new_b as the reference. */
static const char *two_files(uint8_t **old_b, uint8_t **new_b, size_t *size) {
  make_dataset();
  char args[512];
  const char *w = path_of("w.safetensors"), *n = path_of("new.safetensors");
  snprintf(args, sizeof args, "--epochs 0 --seed 2 --save %s", n);
  expect_ok(args);
  snprintf(args, sizeof args, "--epochs 0 --seed 1 --save %s", w);
  expect_ok(args);
  size_t ns;
  *old_b = (uint8_t *)read_file(w, size);
  *new_b = (uint8_t *)read_file(n, &ns);
  cr_assert_eq(ns, *size, "both files have the same size");
  cr_assert_neq(memcmp(*old_b, *new_b, ns), 0, "seeds 1 and 2 give different weights");
  return w;
}

/* W after an interrupted save: 0 if it is the old file, 1 the new one; the test fails on a mix. */
static int old_or_new(const char *w, const uint8_t *old_b, const uint8_t *new_b, size_t size, const char *what) {
  size_t n;
  uint8_t *b = (uint8_t *)read_file(w, &n);
  int which = n == size && !memcmp(b, old_b, size) ? 0 : n == size && !memcmp(b, new_b, size) ? 1 : -1;
  size_t first = 0;
  if (which < 0)
    while (first < n && first < size && b[first] == new_b[first]) first++;
  free(b);
  cr_assert_neq(which, -1,
                "%s: the file (%zu bytes) is neither the old nor the new one (%zu bytes): the new one's "
                "first %zu bytes, then other bytes",
                what, n, size, first);
  char args[512];
  snprintf(args, sizeof args, "--epochs 0 --load %s", w);
  run_out r = run(args);
  cr_assert_eq(r.status, 0, "%s: --load of the remaining file failed (%d):\n%s", what, r.status, r.text);
  return which;
}

static void remove_temporaries(void) {
  DIR *d = opendir(train_dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) unlink(path_of(e->d_name));
  if (d) closedir(d);
}

Test(save, killed_by_the_file_size_limit_at_20_offsets_leaves_the_old_or_the_new_file, .timeout = 240) {
  uint8_t *old_b, *new_b;
  size_t size;
  const char *w = two_files(&old_b, &new_b, &size);
  char args[512];
  snprintf(args, sizeof args, "--epochs 0 --seed 2 --save %s", w);
  int kept = 0, replaced = 0;
  for (int i = 0; i < 20; i++) {
    long long limit = i == 19 ? (long long)size : (long long)(size * (size_t)i / 19) + (i % 3) * 7; /* 0 .. size */
    write_bytes(w, old_b, size);
    run_out r = run_limited(args, limit, 0);
    char what[96];
    snprintf(what, sizeof what, "file-size limit %lld of %zu", limit, size);
    if (limit < (long long)size)
      cr_assert_eq(r.status, 1000 + SIGXFSZ, "%s: expected SIGXFSZ, got %d:\n%s", what, r.status, r.text);
    else
      cr_assert_eq(r.status, 0, "%s: %s", what, r.text);
    int which = old_or_new(w, old_b, new_b, size, what);
    cr_assert_eq(which, limit >= (long long)size, "%s: %s", what, which ? "replaced" : "kept");
    which ? replaced++ : kept++;
    remove_temporaries();
  }
  cr_log_info("file-size limit: %d kills kept the old file, %d complete saves replaced it", kept, replaced);
  /* the same limit with SIGXFSZ ignored: the write fails (EFBIG, like a full disk), the save says so
     and exits 1, the old file is intact and no temporary file is left */
  ignore_xfsz = 1;
  write_bytes(w, old_b, size);
  run_out r = run_limited(args, (long long)size / 2, 0);
  ignore_xfsz = 0;
  cr_assert_eq(r.status, 1, "a failed write exits 1:\n%s", r.text);
  cr_assert_not_null(strstr(r.text, "--save"), "%s", r.text);
  cr_assert_not_null(strstr(r.text, "File too large"), "%s", r.text);
  cr_assert_eq(old_or_new(w, old_b, new_b, size, "a write that failed"), 0);
  DIR *d = opendir(train_dir);
  struct dirent *e;
  while ((e = readdir(d))) cr_assert_null(strstr(e->d_name, ".tmp."), "left behind: %s", e->d_name);
  closedir(d);
  free(old_b);
  free(new_b);
}

Test(save, killed_by_sigkill_during_save_leaves_the_old_or_the_new_file, .timeout = 240) {
  uint8_t *old_b, *new_b;
  size_t size;
  const char *w = two_files(&old_b, &new_b, &size);
  char args[512];
  snprintf(args, sizeof args, "--epochs 0 --seed 2 --save %s", w);
  int outcome[2] = {0, 0};
  for (int i = 0; i < 8; i++) {
    /* the temporary file's size when it is killed: 0 .. 5/6 of the file, then complete (twice) */
    long long at = 1 + (i < 6 ? (long long)(size * (size_t)i / 6) : (long long)size);
    write_bytes(w, old_b, size);
    run_out r = run_limited(args, -1, at);
    char what[96];
    snprintf(what, sizeof what, "SIGKILL at %lld bytes written (exit %d)", at - 1, r.status);
    outcome[old_or_new(w, old_b, new_b, size, what)]++;
    remove_temporaries();
  }
  /* and at moments spread over a whole run (which also catches a writer that makes no temporary file) */
  run_out whole = run(args);
  cr_assert_eq(whole.status, 0, "%s", whole.text);
  for (int i = 1; i <= 12; i++) {
    long long us = (long long)(whole.ms * 3000.0 * i / 12); /* up to 3 times its length */
    write_bytes(w, old_b, size);
    run_out r = run_limited(args, -1, -us);
    char what[96];
    snprintf(what, sizeof what, "SIGKILL %lld us after the start of a %.0f ms run (exit %d)", us, whole.ms, r.status);
    outcome[old_or_new(w, old_b, new_b, size, what)]++;
    remove_temporaries();
  }
  cr_log_info("SIGKILL: %d runs left the old file, %d the new one", outcome[0], outcome[1]);
  free(old_b);
  free(new_b);
}

Test(save, the_same_file_can_be_loaded_and_saved, .timeout = 120) {
  uint8_t *old_b, *new_b;
  size_t size;
  const char *w = two_files(&old_b, &new_b, &size);
  char args[512];
  snprintf(args, sizeof args, "--steps 1 --load %s --save %s", w, w);
  expect_ok(args);
  size_t n;
  uint8_t *b = (uint8_t *)read_file(w, &n);
  cr_assert(n == size && memcmp(b, old_b, n) != 0, "one step changed the weights in place");
  free(b);
  snprintf(args, sizeof args, "--epochs 0 --load %s", w);
  expect_ok(args);
  free(old_b);
  free(new_b);
}

Test(save, a_bad_save_target_is_refused_before_any_work, .timeout = 60) {
  make_dataset();
  const char *fifo = path_of("fifo");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *targets[] = {"/proc/version", fifo, train_dir, "/nonexistent-parity-dir/w.safetensors"};
  const char *why[] = {"/proc/version", "FIFO", "folder", "nonexistent-parity-dir"};
  for (int i = 0; i < 4; i++) {
    char args[512];
    snprintf(args, sizeof args, "--epochs 1 --save %s", targets[i]);
    run_out r = run(args);
    cr_assert(r.status != 0 && r.status < 1000, "--save %s: exit %d:\n%s", targets[i], r.status, r.text);
    cr_assert_not_null(strstr(r.text, "--save"), "--save %s: the message names the option:\n%s", targets[i], r.text);
    cr_assert_not_null(strstr(r.text, why[i]), "--save %s: the message says '%s':\n%s", targets[i], why[i], r.text);
    cr_assert_null(strstr(r.text, "data:"), "--save %s: refused before the data is read:\n%s", targets[i], r.text);
  }
}

Test(save, load_refuses_cut_mixed_and_flipped_files, .timeout = 120) {
  uint8_t *old_b, *new_b;
  size_t size;
  two_files(&old_b, &new_b, &size);
  const char *bad = path_of("bad.safetensors");
  char args[512];
  snprintf(args, sizeof args, "--epochs 0 --load %s", bad);
  /* cut short (also by a whole tensor's bytes) */
  size_t cuts[] = {size - 1, size - 40, size / 2, 100};
  for (int i = 0; i < 4; i++) {
    write_bytes(bad, new_b, cuts[i]);
    expect_refused(args, "--load", bad);
  }
  /* the new header and weights, then the old file's tail: what an in-place rewrite cut short leaves */
  size_t at[] = {size / 3, size / 2, size - 5000}; /* inside the weights (the biases are zero in both) */
  for (int i = 0; i < 3; i++) {
    uint8_t *mix = malloc(size);
    memcpy(mix, new_b, at[i]);
    memcpy(mix + at[i], old_b + at[i], size - at[i]);
    cr_assert_neq(memcmp(mix, new_b, size), 0);
    write_bytes(bad, mix, size);
    free(mix);
    expect_refused(args, "checksum", bad);
  }
  /* one bit flipped in the data */
  uint8_t *flip = malloc(size);
  memcpy(flip, new_b, size);
  flip[size - 1000] ^= 0x10;
  write_bytes(bad, flip, size);
  free(flip);
  expect_refused(args, "checksum", bad);
  free(old_b);
  free(new_b);
}

Test(save, load_refuses_the_other_model_naming_both, .timeout = 120) {
  make_dataset();
  char args[512];
  const char *w = path_of("cnn.safetensors");
  snprintf(args, sizeof args, "--epochs 0 --model cnn --save %s", w);
  expect_ok(args);
  snprintf(args, sizeof args, "--epochs 0 --model mlp --load %s", w);
  expect_refused(args, "holds the weights of the cnn model", "this is the mlp model");
}

/* An MLP file without parity's metadata, as another tool writes it, with one value set. */
static const char *foreign_file(uint32_t bits_at_fc2_bias_3) {
  static const struct {
    const char *name;
    uint32_t n, rows;
  } t[] = {{"fc1.weight", 256 * 784, 256}, {"fc1.bias", 256, 0}, {"fc2.weight", 10 * 256, 10}, {"fc2.bias", 10, 0}};
  char h[1024] = "{";
  uint64_t off = 0;
  for (int i = 0; i < 4; i++) {
    char shape[32];
    if (t[i].rows)
      snprintf(shape, sizeof shape, "%u,%u", t[i].rows, t[i].n / t[i].rows);
    else
      snprintf(shape, sizeof shape, "%u", t[i].n);
    snprintf(h + strlen(h), sizeof h - strlen(h),
             "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%s],\"data_offsets\":[%llu,%llu]}", i ? "," : "", t[i].name, shape,
             (unsigned long long)off, (unsigned long long)(off + 4ull * t[i].n));
    off += 4ull * t[i].n;
  }
  strcat(h, "}");
  size_t hl = strlen(h), size = 8 + hl + off;
  uint8_t *b = calloc(1, size);
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
  memcpy(b + 8, h, hl);
  memcpy(b + size - 7 * 4, &bits_at_fc2_bias_3, 4); /* fc2.bias[3] */
  const char *p = path_of("foreign.safetensors");
  write_bytes(p, b, size);
  free(b);
  return p;
}

Test(save, load_accepts_a_foreign_file_with_a_note_and_refuses_nan_or_inf, .timeout = 120) {
  make_dataset();
  char args[512];
  const char *p = foreign_file(0x3f800000u); /* 1.0 */
  snprintf(args, sizeof args, "--epochs 0 --load %s", p);
  run_out r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.text);
  cr_assert_not_null(strstr(r.text, "no parity.checksum"), "a note says the file is not checked:\n%s", r.text);
  uint32_t bad[] = {0x7fc00000u, 0x7f800000u, 0xff800000u}; /* NaN, +Inf, -Inf */
  for (int i = 0; i < 3; i++) {
    p = foreign_file(bad[i]);
    snprintf(args, sizeof args, "--epochs 0 --load %s", p);
    expect_refused(args, "fc2.bias", "--allow-nonfinite");
    snprintf(args, sizeof args, "--epochs 0 --allow-nonfinite --load %s", p);
    expect_ok(args);
  }
}
