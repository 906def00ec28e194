/* parity-train — trains on the backend PARITY_BACKEND selects: by default a small MLP and CNN on
 * generated data (synthetic.c); with --data fashion-mnist an MLP or CNN on Fashion-MNIST
 * (fashion.c, models.c; docs/training.md). Every argument is checked; bad usage exits 2. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "checkpoint.h"
#include "parity_support/atomic_file.h"
#include "common.h"
#include "distributed.h"
#include "fashion.h"
#include "synthetic.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: parity-train [options]   (runs on the device PARITY_BACKEND / PARITY_DEVICE select)\n"
          "  --data synthetic|fashion-mnist  generated data (default) or the real dataset\n"
          "  --model mlp|cnn|both       synthetic: default both; fashion-mnist: mlp (default) or cnn\n"
          "  --dtype f32|bf16|f16|f64   parameter and activation storage (default f32)\n"
          "  --seed S                   initialisation (and shuffle) seed, default 1\n"
          "  --lr LR                    learning rate (default: synthetic 0.02; sgd 0.05 mlp, 0.02 cnn; adam 0.001)\n"
          "  --steps N                  synthetic: steps (default 20); fashion-mnist: stop after N steps\n"
          "  --verify                   shadow mode: every op also runs on the CPU plugin in float64\n"
          " fashion-mnist only:\n"
          "  --data-dir DIR             the IDX files (default " FASHION_DEFAULT_DIR
          ")\n"
          "  --epochs N                 passes over the training set (default 1; 0: only evaluate)\n"
          "  --batch N                  mini-batch size (default 64)\n"
          "  --optimizer sgd|adam       default sgd with momentum; adam: beta 0.9, 0.999, eps as --eps\n"
          "  --eps E                    adam's epsilon (default 1e-8; f16: 1e-4, as 1e-8 is 0 in f16)\n"
          "  --momentum M               sgd momentum (default 0.9)\n"
          "  --schedule cosine|constant learning rate over the run (default cosine for sgd; adam: constant)\n"
          "  --shuffle on|off           seeded shuffle each epoch (default on), or the file's order\n"
          "  --train-images N           use only the first N training images (default all)\n"
          "  --test-images N            evaluate on only the first N test images (default all)\n"
          "  --log-every N              progress line every N steps (default 100)\n"
          "  --save FILE                write the weights after training (safetensors)\n"
          "  --load FILE                start from these weights (safetensors; may be the --save file)\n"
          "  --predictions FILE         write the last evaluation's predicted class per test image (text:\n"
          "                             'index class' per line, in test-file order; docs/training.md)\n"
          "  --allow-nonfinite          let --load accept NaN or infinite weights (refused by default)\n"
          "  --checkpoint-every N       write D/<model>.safetensors every N steps: weights, optimizer state,\n"
          "  --checkpoint-dir D         step, shuffle position (the one before kept as .prev)\n"
          "  --resume D                 continue from D's newest good checkpoint: the run ends bitwise as\n"
          "                             if never stopped (docs/training.md)\n"
          " parity-train --distributed --help: data-parallel training on MPI (docs/distributed.md)\n");
}

/* Whether a and b name one file: the same text, or both exist and are the same inode (a link, a
 * "./" prefix). */
static int same_file(const char *a, const char *b) {
  if (!a || !b) return 0;
  if (!strcmp(a, b)) return 1;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static const char *const data_names[] = {"synthetic", "fashion-mnist", NULL};
static const char *const model_names[] = {"mlp", "cnn", "both", NULL};
static const char *const dtype_names[] = {"f32", "bf16", "f16", "f64", NULL};
static const parity_dtype_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_BF16, PARITY_DTYPE_F16, PARITY_DTYPE_F64};

/* The command line, as given (indices into the name lists above; -1: not given). */
typedef struct train_args {
  int data, model, dtype, optimizer, shuffle, verify, schedule, allow_nonfinite;
  long steps, epochs, batch, train_images, test_images, log_every, ckpt_every;
  double lr, momentum, eps;
  long seed;
  const char *dir, *save, *load, *predictions, *ckpt_dir, *resume;
  const char *fashion_only; /* the first fashion-mnist option given, for the synthetic mode's error */
} train_args;

/* parse_args' result when the run goes on (otherwise: the exit status, 0 after --help). */
#define ARGS_GO_ON (-1)

/* every field's default; -1: chosen later from the others (check_args) */
static const train_args train_defaults = {.data = 0,
                                          .model = -1,
                                          .dtype = 0,
                                          .optimizer = OPT_SGD,
                                          .shuffle = 1,
                                          .verify = 0,
                                          .schedule = -1,
                                          .allow_nonfinite = 0,
                                          .steps = -1,
                                          .epochs = 1,
                                          .batch = 64,
                                          .train_images = 0,
                                          .test_images = 0,
                                          .log_every = 100,
                                          .ckpt_every = 0,
                                          .lr = NAN,
                                          .momentum = 0.9,
                                          .eps = NAN,
                                          .seed = 1,
                                          .dir = FASHION_DEFAULT_DIR};

/* the options that take a value, in parse_args' switch order (6 and on: Fashion-MNIST only) */
static const char *const known[] = {"--data",
                                    "--model",
                                    "--dtype",
                                    "--seed",
                                    "--lr",
                                    "--steps",
                                    "--data-dir",
                                    "--epochs",
                                    "--batch",
                                    "--optimizer",
                                    "--momentum",
                                    "--shuffle",
                                    "--train-images",
                                    "--test-images",
                                    "--log-every",
                                    "--save",
                                    "--load",
                                    "--schedule",
                                    "--predictions",
                                    "--checkpoint-every",
                                    "--checkpoint-dir",
                                    "--resume",
                                    "--eps",
                                    NULL};

/* Every option into *t, each value checked alone (the combinations: check_args). */
static int parse_args(int argc, char **argv, train_args *t) {
  static const char *const opt_names[] = {"adam", "sgd", NULL};
  static const char *const onoff[] = {"off", "on", NULL};
  static const char *const sched_names[] = {"constant", "cosine", NULL};
  *t = train_defaults;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--verify")) {
      t->verify = 1;
      continue;
    }
    if (!strcmp(a, "--allow-nonfinite")) {
      t->allow_nonfinite = 1;
      t->fashion_only = t->fashion_only ? t->fashion_only : a;
      continue;
    }
    int k = -1;
    for (int j = 0; known[j]; j++)
      if (!strcmp(a, known[j])) k = j;
    if (k < 0) return bad("unknown option '%s'", a);
    if (i + 1 >= argc) return bad("%s needs a value", a);
    const char *v = argv[++i];
    int r = 0;
    if (k >= 6) t->fashion_only = t->fashion_only ? t->fashion_only : known[k];
    switch (k) {
      case 0: r = parse_name(a, v, data_names, &t->data); break;
      case 1: r = parse_name(a, v, model_names, &t->model); break;
      case 2: r = parse_name(a, v, dtype_names, &t->dtype); break;
      case 3: r = parse_long(a, v, 0, 0x7fffffffffffffffL, &t->seed); break;
      case 4: r = parse_double(a, v, 1e-12, 100, &t->lr); break;
      case 5: r = parse_long(a, v, 0, 100000000, &t->steps); break;
      case 6: t->dir = *v ? v : (r = bad("--data-dir needs a folder"), t->dir); break;
      case 7: r = parse_long(a, v, 0, 1000, &t->epochs); break;
      case 8: r = parse_long(a, v, 1, 60000, &t->batch); break;
      case 9: r = parse_name(a, v, opt_names, &t->optimizer); break;
      case 10: r = parse_double(a, v, 0, 0.999999, &t->momentum); break;
      case 11: r = parse_name(a, v, onoff, &t->shuffle); break;
      case 12: r = parse_long(a, v, 1, 100000000, &t->train_images); break;
      case 13: r = parse_long(a, v, 1, 100000000, &t->test_images); break;
      case 14: r = parse_long(a, v, 1, 100000000, &t->log_every); break;
      case 15: t->save = *v ? v : (r = bad("--save needs a file name"), t->save); break;
      case 16: t->load = *v ? v : (r = bad("--load needs a file name"), t->load); break;
      case 17: r = parse_name(a, v, sched_names, &t->schedule); break;
      case 18: t->predictions = *v ? v : (r = bad("--predictions needs a file name"), t->predictions); break;
      case 19: r = parse_long(a, v, 1, 100000000, &t->ckpt_every); break;
      case 20:
      case 21: {
        char cerr[600];
        if (ckpt_dir_check(v, cerr, sizeof cerr))
          r = bad("%s: %s", a, cerr);
        else
          *(k == 21 ? &t->resume : &t->ckpt_dir) = v;
        break;
      }
      case 22: r = parse_double(a, v, 1e-30, 1, &t->eps); break;
    }
    if (r) return r;
  }
  return ARGS_GO_ON;
}

/* The options' combinations, and the defaults that depend on others; 0 or bad(...). */
static int check_args(train_args *t) {
  if (t->data == 0 && t->fashion_only) return bad("%s applies only with --data fashion-mnist", t->fashion_only);
  if ((t->ckpt_every || t->ckpt_dir) && !t->ckpt_dir && !t->resume)
    return bad("--checkpoint-every needs --checkpoint-dir D (or --resume D, which then also receives them)");
  if (t->ckpt_dir && !t->ckpt_every) return bad("--checkpoint-dir needs --checkpoint-every N");
  if ((t->ckpt_every || t->resume) && t->load) return bad("--resume and --load both say where to start: give one");
  if (t->schedule < 0) t->schedule = t->optimizer == OPT_SGD; /* cosine for sgd, constant for adam */
  if (t->schedule == 1 && t->optimizer == OPT_ADAM)
    return bad("--schedule cosine needs --optimizer sgd (the core's Adam has a fixed learning rate)");
  if (t->data == 1 && t->model == 2) return bad("--data fashion-mnist trains one model: --model mlp or cnn");
  if (!isnan(t->eps) && t->optimizer != OPT_ADAM) return bad("--eps applies only with --optimizer adam");
  return 0;
}

/* The files written at the end, checked now, before any work; 0 or bad(...). */
static int check_outputs(const train_args *t) {
  /* the --save target is written at the end through the atomic writer (a temporary file renamed
     over it), so it may also be the --load file */
  char serr[PSUP_PATH_MAX + 256];
  if (t->save && psup_atomic_check(t->save, serr, sizeof serr)) return bad("--save: %s", serr);
  /* --predictions the same way: checked now, written at the end through the atomic writer; it may
     not be the --save or --load file (the text would replace the weights) */
  if (t->predictions) {
    if (psup_atomic_check(t->predictions, serr, sizeof serr)) return bad("--predictions: %s", serr);
    if (same_file(t->predictions, t->save))
      return bad("--predictions and --save name the same file '%s'", t->predictions);
    if (same_file(t->predictions, t->load))
      return bad("--predictions and --load name the same file '%s'", t->predictions);
  }
  return 0;
}

/* The training the arguments ask for, on dev: the synthetic models or the Fashion-MNIST run. */
static int run_training(parity_device_t *dev, const train_args *t) {
  if (t->data == 0) {
    int st = t->steps < 0 ? 20 : (int)t->steps;
    double l = isnan(t->lr) ? 0.02 : t->lr;
    if (t->model != 1) synthetic_train_mlp(dev, dtypes[t->dtype], st, (uint64_t)t->seed, l);
    if (t->model != 0) synthetic_train_cnn(dev, dtypes[t->dtype], st, (uint64_t)t->seed, l);
    return 0;
  }
  const int optimizer = t->optimizer, model = t->model;
  fashion_opts o = {.dir = t->dir,
                    .model = model == 1 ? MODEL_CNN : MODEL_MLP,
                    .dtype = dtypes[t->dtype],
                    .dtype_name = dtype_names[t->dtype],
                    .epochs = t->epochs,
                    .batch = t->batch,
                    .steps = t->steps,
                    .train_images = t->train_images,
                    .test_images = t->test_images,
                    .log_every = t->log_every,
                    .optimizer = (optimizer_kind)optimizer,
                    .lr = isnan(t->lr) ? (optimizer == OPT_ADAM ? 0.001
                                          : model == 1          ? 0.02
                                                                : 0.05)
                                       : t->lr,
                    .momentum = t->momentum,
                    .eps = !isnan(t->eps) ? t->eps : train_adam_eps(dtypes[t->dtype]),
                    .seed = (uint64_t)t->seed,
                    .shuffle = t->shuffle,
                    .cosine = t->schedule == 1,
                    .load = t->load,
                    .save = t->save,
                    .predictions = t->predictions,
                    .allow_nonfinite = t->allow_nonfinite,
                    .ckpt_every = t->ckpt_every,
                    .ckpt_dir = t->ckpt_dir ? t->ckpt_dir : t->resume,
                    .resume = t->resume};
  return fashion_run(dev, &o);
}

/* --verify's verdict: 0 when every op agreed with the CPU plugin in float64, else 1. */
static int verify_verdict(parity_device_t *dev) {
  const char *r = parity_device_verify_report(dev);
  if (r) {
    printf("%s\n", r);
    return 1;
  }
  printf("verify: %llu ops on %s agree with the CPU plugin in float64 within the conformance rule\n",
         (unsigned long long)parity_device_verify_count(dev), parity_device_plugin_name(dev));
  return 0;
}

int main(int argc, char **argv) {
  /* --distributed / --slices: data-parallel training on MPI ranks (distributed.c) */
  if (train_distributed_wanted(argc, argv)) return train_distributed_main(argc, argv);
  train_args t;
  int r = parse_args(argc, argv, &t);
  if (r != ARGS_GO_ON) return r;
  if ((r = check_args(&t)) != 0) return r;
  /* --verify: every op also runs on the CPU plugin in float64 (PARITY_VERIFY=cpu, read by libparity) */
  if (t.verify) setenv("PARITY_VERIFY", "cpu", 1);
  if ((r = check_outputs(&t)) != 0) return r;

  parity_context_t *ctx;
  parity_device_t *dev;
  CHECK(parity_context_create(NULL, &ctx));
  if (parity_context_default_device(ctx, &dev) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-train: %s\n", parity_last_error());
    parity_context_destroy(ctx);
    return 2;
  }
  parity_device_info_t info = {.struct_size = sizeof info};
  parity_device_get_info(dev, &info);
  printf("device: %s (plugin %s), dtype %s, seed %llu\n", info.name, parity_device_plugin_name(dev),
         dtype_names[t.dtype], (unsigned long long)t.seed);
  int rc = run_training(dev, &t);
  if (t.verify && verify_verdict(dev)) rc = 1;
  parity_context_destroy(ctx);
  return rc;
}
