/* train.c — the train section: images per second of training the Fashion-MNIST CNN
 * (tools/train/models.c), batch 64, SGD with momentum, on generated images (the dataset is not
 * needed): 2 warm-up steps, then --train-steps timed steps of forward, loss, backward and an
 * update, the loss read back each step as parity-train does. Reference: torch's step of the
 * same layers on one batch (torch_ref.py, "train-cnn"), timed by the timing rule after parity's
 * steps (they are not timing-rule repetitions, so the two do not take turns). */
#include <stdio.h>

#include "models.h"
#include "sections.h"

void section_train(bench_run *run, parity_device_t *dev, const char *backend) {
  enum { BATCH = 64, EPOCH = 60000 };
  long steps = run->o->train_steps;
  model m;
  parity_tensor_t *x = NULL, *y = NULL;
  parity_optimizer_t *opt = NULL;
  float onehot[BATCH * MODEL_CLASSES] = {0};
  for (int b = 0; b < BATCH; b++) onehot[b * MODEL_CLASSES + b % MODEL_CLASSES] = 1;
  model_init(&m, MODEL_CNN, dev, PARITY_DTYPE_F32, 1);
  int ok = parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){BATCH, 1, 28, 28}, 0, 1, 9, 0, &x) ==
               PARITY_STATUS_OK &&
           parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, MODEL_CLASSES}, onehot, &y) ==
               PARITY_STATUS_OK &&
           parity_sgd_create(m.param, m.count, 0.01, 0.9, &opt) == PARITY_STATUS_OK;
  double t0 = 0, loss = 0;
  for (long s = -2; s < steps && ok; s++) {
    if (s == 0) t0 = bench_now_s();
    ok = model_grad(&m, x, y, 1.0, &loss) == PARITY_STATUS_OK && parity_optimizer_step(opt) == PARITY_STATUS_OK;
  }
  if (ok) ok = parity_device_synchronize(dev) == PARITY_STATUS_OK;
  if (ok) {
    double t = bench_now_s() - t0, ips = (double)(steps * BATCH) / t;
    bench_figure *f = bench_add(run->results, "train", "train-cnn", backend, "64x1x28x28", BATCH * 784.0, run->threads,
                                ips, "images/s");
    fprintf(run->log, "%s: train-cnn %.1f images/s, %ld steps of %d (one %d-image epoch: %.1f s)\n", backend, ips,
            steps, BATCH, EPOCH, EPOCH / ips);
    if (f) { /* torch's images/s = work / seconds per step / 1e9, the scale of every reference */
      f->work = BATCH * 1e9;
      torch_ref torch;
      bench_job tj;
      if (torch_ref_job(&torch, &tj, "train-cnn", 4, (const int64_t[]){BATCH, 1, 28, 28}, 0, NULL))
        bench_time_jobs(&tj, 1, &run->timing); /* after parity's steps: not interleaved */
      torch_ref_done(&torch, &tj);
      torch_ref_attach(&torch, f);
      bench_print_row(run->log, f);
    }
  } else {
    fprintf(run->log, "%s: train-cnn unsupported: %s\n", backend, parity_last_error());
  }
  parity_optimizer_destroy(opt);
  parity_tensor_release(x);
  parity_tensor_release(y);
  model_release(&m);
}
