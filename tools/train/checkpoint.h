/* checkpoint.h — parity-train's training checkpoints (--checkpoint-every N, --checkpoint-dir D,
 * --resume D): the parameters, the optimizer's whole state and the run's position in one safetensors
 * file per model (parity_checkpoint_save, parity/safetensors.h), D/<model>.safetensors, the one
 * before it kept as D/<model>.prev.safetensors. */
#ifndef PARITY_TRAIN_CHECKPOINT_H
#define PARITY_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "parity/parity.h"

/* What a run must share with the run it resumes (seed, dtype, batch, ...): key/value pairs
 * written into the checkpoint's metadata and compared on resume. */
typedef struct ckpt_meta {
  const char *keys[12];
  char values[12][64];
  size_t count;
} ckpt_meta;
void ckpt_meta_add(ckpt_meta *m, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether D can hold checkpoints (a folder that exists and can be written). 0, or -1 with err. */
int ckpt_dir_check(const char *dir, char *err, size_t errlen);

/* Write the checkpoint of `model` after `step` steps: the current file becomes .prev, then the new
 * one is written atomically (a crash at any point leaves a complete current or previous file).
 * 0, or -1 with err. */
int ckpt_save(const char *dir, const char *model, const char *const *names, parity_tensor_t *const *p, uint32_t n,
              parity_optimizer_t *opt, const ckpt_meta *meta, uint64_t step, char *err, size_t errlen);

/* Load the newest good checkpoint of `model` from D into p and opt: the current file, or, when it is
 * refused (cut, changed, another run's), the previous one, with the reason in note. *step gets the
 * steps it holds. 0: loaded; 1: D holds no checkpoint of this model (nothing changed); -1: none
 * could be loaded (err says why for each; nothing changed). */
int ckpt_load(const char *dir, const char *model, const char *const *names, parity_tensor_t *const *p, uint32_t n,
              parity_optimizer_t *opt, const ckpt_meta *meta, uint64_t *step, char *note, size_t notelen, char *err,
              size_t errlen);

#endif
