/* fashion.h — parity-train's real workload: Fashion-MNIST (IDX files) with the models of
 * models.h, mini-batch training, test accuracy after each epoch (docs/training.md). */
#ifndef PARITY_TRAIN_FASHION_H
#define PARITY_TRAIN_FASHION_H

#include <stdint.h>
#include <stdio.h>

#include "models.h"

#define FASHION_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef enum optimizer_kind { OPT_ADAM, OPT_SGD } optimizer_kind;

typedef struct fashion_opts {
  const char *dir;
  model_kind model;
  parity_dtype_t dtype;
  const char *dtype_name;
  long epochs; /* 0: only evaluate (the initial or --load weights) */
  long batch;
  long steps;        /* stop after this many steps in all (-1: no limit) */
  long train_images; /* use the first N training / test images (0: all) */
  long test_images;
  long log_every; /* progress line every N steps (and at each epoch's last step) */
  optimizer_kind optimizer;
  double lr, momentum, eps; /* eps: Adam's */
  uint64_t seed;
  int shuffle;
  int cosine;                    /* SGD: scale the gradients by 0.5 (1 + cos(pi step / steps)) */
  const char *load;              /* safetensors file to start from, or NULL */
  const char *save;              /* safetensors file written at the end (checked before any work), or NULL */
  const char *predictions;       /* text file of the last evaluation's predicted classes (checked before any
                              work, written at the end through the atomic writer), or NULL */
  int allow_nonfinite;           /* --load accepts NaN / Inf weights */
  long ckpt_every;               /* write a checkpoint every N steps into ckpt_dir (0: none) */
  const char *ckpt_dir, *resume; /* checkpoint folder; resume from the newest good one there */
} fashion_opts;

/* Returns the process exit status (0, or 1 with a message on stderr). */
int fashion_run(parity_device_t *dev, const fashion_opts *o);

#endif
