/* parity-train --data fashion-mnist, end to end on the real dataset (a slice, to stay short):
 * bad usage exits 2 with a message; a 200-step MLP run lowers the loss below a stated value; the
 * same seed gives the bitwise-same curve on the CPU; opencl (and vulkan or cuda where present)
 * give the same curve within 1e-4 relative; saved weights load back to the same test accuracy and
 * predictions bit for bit, also on opencl; bad weight files are refused cleanly. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parity/safetensors.h"
#include "test_util.h"

#define DATA_DIR "/usr/share/datasets/fashion-mnist"
/* The short run: 12,800 training images = 200 steps of 64, evaluated on 2,000 test images. */
#define SHORT "--data fashion-mnist --train-images 12800 --test-images 2000 --steps 200 --log-every 1 --seed 7"
#define STEPS 200
/* Measured 0.418 on cpu and opencl (seed 7); the initial loss is about 2.4. */
#define FINAL_LOSS_BELOW 0.6

typedef struct run_out {
  int status; /* exit status, or 1000 + signal */
  char text[1 << 16];
  double loss[STEPS + 8];
  int steps;
  char accuracy[128]; /* "(correct/total) predictions HASH" of the last evaluation */
} run_out;

static run_out *run(const char *backend, const char *args) {
  run_out *r = calloc(1, sizeof *r);
  cr_assert_not_null(r);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "env PARITY_LOG=quiet PARITY_PLUGIN_PATH= PARITY_BACKEND=%s '%s/parity-train' %s 2>&1",
           backend, PARITY_BIN_DIR, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char line[512];
  size_t used = 0;
  while (fgets(line, sizeof line, p)) {
    size_t n = strlen(line);
    if (used + n < sizeof r->text) {
      memcpy(r->text + used, line, n + 1);
      used += n;
    }
    const char *l = strstr(line, " loss ");
    if (!strncmp(line, "epoch ", 6) && l && r->steps < STEPS + 8) r->loss[r->steps++] = strtod(l + 6, NULL);
    const char *a = strstr(line, "test accuracy ");
    if (a && strchr(a, '(')) snprintf(r->accuracy, sizeof r->accuracy, "%s", strchr(a, '('));
  }
  int st = pclose(p);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

static void need_dataset(void) {
  struct stat s;
  if (stat(DATA_DIR "/train-images-idx3-ubyte.gz", &s) != 0)
    cr_assert_fail("Fashion-MNIST is not installed in " DATA_DIR
                   ": apt-get install dataset-fashion-mnist "
                   "(make test and tools/install-deps.sh install it)");
}

static void expect_exit(const char *backend, const char *args, int status, const char *message) {
  run_out *r = run(backend, args);
  cr_assert_eq(r->status, status, "parity-train %s: exit status %d, expected %d; output:\n%s", args, r->status, status,
               r->text);
  cr_assert_not_null(strstr(r->text, message), "parity-train %s: output lacks '%s':\n%s", args, message, r->text);
  free(r);
}

Test(fashion_cli, bad_usage_exits_2_with_a_message) {
  static const char *cases[][2] = {
      {"--lr abc", "--lr='abc' is not a number"},
      {"--lr 0.1x", "--lr='0.1x' is not a number"},
      {"--lr -1", "--lr='-1' is out of range"},
      {"--lr", "--lr needs a value"},
      {"--steps 12x", "--steps='12x' is not a whole number"},
      {"--seed -1", "--seed='-1' is out of range"},
      {"--frobnicate 1", "unknown option '--frobnicate'"},
      {"--dtype f8", "--dtype must be one of f32, bf16, f16, f64, not 'f8'"},
      {"--data mnist", "--data must be one of synthetic, fashion-mnist, not 'mnist'"},
      {"--epochs 2", "--epochs applies only with --data fashion-mnist"},
      {"--data fashion-mnist --batch 0", "--batch='0' is out of range; expected an integer in [1, 60000]"},
      {"--data fashion-mnist --epochs 1e3", "--epochs='1e3' is not a whole number"},
      {"--data fashion-mnist --model both", "trains one model: --model mlp or cnn"},
      {"--data fashion-mnist --shuffle maybe", "--shuffle must be one of off, on"},
      {"--data fashion-mnist --optimizer adam --schedule cosine", "--schedule cosine needs --optimizer sgd"},
      {"--data fashion-mnist --momentum 1", "--momentum='1' is out of range"},
      {"--data fashion-mnist --save /nonexistent-parity-dir/w.safetensors", "--save: cannot write"},
      {"--data fashion-mnist --save /proc/version", "--save: cannot write '/proc/version'"},
      {"--allow-nonfinite", "--allow-nonfinite applies only with --data fashion-mnist"},
      {"--data fashion-mnist --eps 1e-3", "--eps applies only with --optimizer adam"},
      {"--data fashion-mnist --optimizer adam --eps 0", "--eps='0' is out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_exit("cpu", cases[i][0], 2, cases[i][1]);
  run_out *r = run("cpu", "--help");
  cr_assert_eq(r->status, 0);
  cr_assert_not_null(strstr(r->text, "--data-dir"));
  free(r);
}

Test(fashion_cli, a_missing_dataset_folder_is_named) {
  expect_exit("cpu", "--data fashion-mnist --data-dir /nonexistent-parity-data", 1,
              "/nonexistent-parity-data/train-images-idx3-ubyte.gz: cannot open");
}

static void expect_same_curve(const run_out *ref, const run_out *other, const char *what, double rel) {
  cr_assert_eq(other->status, 0, "%s failed:\n%s", what, other->text);
  cr_assert_eq(other->steps, ref->steps, "%s: %d steps, cpu %d", what, other->steps, ref->steps);
  for (int i = 0; i < ref->steps; i++) {
    if (rel == 0)
      cr_assert(memcmp(&ref->loss[i], &other->loss[i], sizeof(double)) == 0, "%s step %d: loss %.9g, first run %.9g",
                what, i + 1, other->loss[i], ref->loss[i]);
    else
      cr_assert(fabs(other->loss[i] - ref->loss[i]) <= rel * fabs(ref->loss[i]), "%s step %d: loss %.9g, cpu %.9g",
                what, i + 1, other->loss[i], ref->loss[i]);
  }
}

static int available(const run_out *r) {
  return !(r->status != 0 && (strstr(r->text, "names no plugin") || strstr(r->text, "unavailable")));
}

Test(fashion, short_run_learns_repeats_bitwise_and_agrees_across_backends, .timeout = 600) {
  need_dataset();
  char dir[64] = "/tmp/parity-fm-XXXXXX", args[512], w[128];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(w, sizeof w, "%s/cpu.safetensors", dir);
  snprintf(args, sizeof args, SHORT " --save %s", w);
  run_out *ref = run("cpu", args);
  cr_assert_eq(ref->status, 0, "cpu run failed:\n%s", ref->text);
  cr_assert_eq(ref->steps, STEPS, "%d progress lines:\n%s", ref->steps, ref->text);
  cr_assert_gt(ref->loss[0], 1.5, "the first loss is near ln 10: %g", ref->loss[0]);
  cr_assert_lt(ref->loss[STEPS - 1], FINAL_LOSS_BELOW, "the loss falls below %g in %d steps: %g", FINAL_LOSS_BELOW,
               STEPS, ref->loss[STEPS - 1]);
  cr_assert_neq(ref->accuracy[0], 0, "no test accuracy line:\n%s", ref->text);

  run_out *again = run("cpu", SHORT);
  expect_same_curve(ref, again, "cpu, second run", 0);
  cr_assert_str_eq(again->accuracy, ref->accuracy);
  free(again);

  /* --shuffle off is another, fixed order: a different curve */
  run_out *fixed = run("cpu", SHORT " --shuffle off --steps 5");
  cr_assert_eq(fixed->status, 0, "%s", fixed->text);
  cr_assert_neq(memcmp(fixed->loss + 1, ref->loss + 1, 4 * sizeof(double)), 0, "--shuffle off changes the order");
  free(fixed);

  /* load back: the same test accuracy and predictions, bit for bit, on cpu and on opencl */
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 2000 --epochs 0 --load %s", w);
  run_out *loaded = run("cpu", args);
  cr_assert_eq(loaded->status, 0, "%s", loaded->text);
  cr_assert_str_eq(loaded->accuracy, ref->accuracy, "after --load on cpu: %s; after training: %s", loaded->accuracy,
                   ref->accuracy);
  free(loaded);
  loaded = run("opencl", args);
  cr_assert_eq(loaded->status, 0, "opencl is required here (PoCL is installed by tools/install-deps.sh):\n%s",
               loaded->text);
  cr_assert_str_eq(loaded->accuracy, ref->accuracy, "cpu weights on opencl: %s; on cpu: %s", loaded->accuracy,
                   ref->accuracy);
  free(loaded);

  /* the same curve on every other backend: opencl required, vulkan and cuda where present */
  const char *others[] = {"opencl", "vulkan", "cuda"};
  for (int b = 0; b < 3; b++) {
    run_out *o = run(others[b], SHORT);
    if (b > 0 && !available(o)) {
      free(o);
      continue;
    }
    expect_same_curve(ref, o, others[b], 1e-4);
    free(o);
  }
  free(ref);
  pt_remove_tree(dir);
}

/* f16 Adam: its default eps is 1e-4, since PyTorch's 1e-8 is 0 in f16 and then the update divides
 * by zero wherever a gradient's square underflows (the loss is NaN at step 2). 100 steps learn:
 * measured 1.27 at step 20, 0.41 at step 100 (cpu, seed 1; f32 and bf16 reach 82 % on these 1,000
 * test images, f16 81.7 %). */
Test(fashion, f16_adam_learns_with_its_default_eps, .timeout = 300) {
  need_dataset();
  const char *args =
      "--data fashion-mnist --dtype f16 --optimizer adam --train-images 6400 --test-images 1000 "
      "--steps 100 --log-every 1";
  run_out *r = run("cpu", args);
  cr_assert_eq(r->status, 0, "%s", r->text);
  cr_assert(strstr(r->text, "adam lr 0.001 eps 0.0001"), "%s", r->text);
  cr_assert_eq(r->steps, 100, "%d progress lines:\n%s", r->steps, r->text);
  double last = 0;
  for (int i = 90; i < 100; i++) last += r->loss[i] / 10;
  cr_assert(r->loss[0] > 1.5 && last < 0.8, "loss %g at step 1, %g over the last 10 steps", r->loss[0], last);
  free(r);
  expect_exit("cpu", "--data fashion-mnist --dtype f16 --optimizer adam --eps 1e-8 --train-images 640 --steps 5", 1,
              "diverged");
}

Test(fashion, weight_files_that_do_not_fit_the_model_are_refused) {
  need_dataset();
  char dir[64] = "/tmp/parity-fm-XXXXXX", args[512], w[128], bad[128];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(w, sizeof w, "%s/mlp.safetensors", dir);
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 10 --epochs 0 --save %s", w);
  run_out *r = run("cpu", args);
  cr_assert_eq(r->status, 0, "%s", r->text);
  free(r);
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 10 --epochs 0 --model cnn --load %s", w);
  expect_exit("cpu", args, 1, "holds the weights of the mlp model (metadata parity.model); this is the cnn model");
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 10 --epochs 0 --dtype bf16 --load %s", w);
  expect_exit("cpu", args, 1, "tensor \"fc1.weight\" is F32; the model is BF16");
  /* the right names, one wrong shape */
  static float zeros[256 * 784];
  uint64_t s0[2] = {256, 783}, s1[1] = {256}, s2[2] = {10, 256}, s3[1] = {10};
  parity_st_entry e[4] = {{"fc1.weight", "F32", 2, s0, zeros},
                          {"fc1.bias", "F32", 1, s1, zeros},
                          {"fc2.weight", "F32", 2, s2, zeros},
                          {"fc2.bias", "F32", 1, s3, zeros}};
  snprintf(bad, sizeof bad, "%s/shape.safetensors", dir);
  char err[256];
  cr_assert_eq(parity_st_save(bad, e, 4, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 10 --epochs 0 --load %s", bad);
  expect_exit("cpu", args, 1, "tensor \"fc1.weight\" has shape [256, 783]; the mlp model needs [256, 784]");
  /* not a safetensors file at all, and a truncated one */
  snprintf(args, sizeof args,
           "--data fashion-mnist --test-images 10 --epochs 0 --load " DATA_DIR "/t10k-labels-idx1-ubyte.gz");
  expect_exit("cpu", args, 1, "--load " DATA_DIR "/t10k-labels-idx1-ubyte.gz");
  cr_assert_eq(truncate(w, 1000), 0);
  snprintf(args, sizeof args, "--data fashion-mnist --test-images 10 --epochs 0 --load %s", w);
  expect_exit("cpu", args, 1, "lie outside the");
  pt_remove_tree(dir);
}
