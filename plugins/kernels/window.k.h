/* window.k.h — what conv.k.h and pool.k.h share besides their struct (cv_t, kernel_params.h's
 * kp_cv_t: one window geometry): the NCHW split of a linear item index. */
#ifndef PARITY_KERNELS_WINDOW_K_H
#define PARITY_KERNELS_WINDOW_K_H

/* split i into four indices of sizes (d0 implied), d1, d2, d3 */
DEV void split4(long i, long d1, long d2, long d3, long *q) {
  q[3] = i % d3;
  i /= d3;
  q[2] = i % d2;
  i /= d2;
  q[1] = i % d1;
  q[0] = i / d1;
}

#endif
