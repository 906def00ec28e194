/* Prepared plans as CUDA graphs on the emulated driver (fake_libcuda.c built with
 * FAKE_CUDA_EMULATE: the plugin's kernels run on the CPU, a graph launch runs the captured kernels
 * and memsets in order): one training-like step across the families (conv2d, max and avg pooling,
 * softmax, matmul, elementwise, sum/mean, max and min with their backward, whose tie counts take
 * scratch memory), recorded once and replayed several times with new inputs written before each
 * replay, gives bit for bit what the same step gives eagerly on the same inputs; and every replay
 * is one graph launch (the plugin prepared the plan, not the host replaying it op by op); and eager
 * work between the capture and a replay that grows the device's scratch leaves the replay alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "test_util.h"

#define OK(expr) cr_assert_eq((expr), PARITY_STATUS_OK, "%s: %s", #expr, parity_last_error())

enum { NIN = 5, REPLAYS = 4, NOUT = 1 + 108 + 30 + 60 + 3 * 2 * 4 * 4 };
static const uint32_t rank_of[NIN] = {4, 4, 3, 2, 2};
static const int64_t shape_of[NIN][4] = {{2, 3, 9, 9}, {4, 3, 3, 3}, {2, 7, 5}, {5, 6}, {6, 10}};
static const int needs_grad[NIN] = {0, 1, 0, 1, 1};

typedef struct net {
  parity_tensor_t *in[NIN]; /* x, w (conv), xm, wm (matmul), xr (max/min) */
} net;

static int fake_int(const char *name) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the emulated driver is not loaded");
  int (*f)(void) = (int (*)(void))dlsym(lib, name);
  cr_assert_not_null(f, "no %s in the emulated driver", name);
  return f();
}

static net net_new(parity_device_t *dev) {
  net n;
  for (int i = 0; i < NIN; i++) {
    OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, rank_of[i], shape_of[i], &n.in[i]));
    if (needs_grad[i]) OK(parity_tensor_set_requires_grad(n.in[i], 1));
  }
  return n;
}

/* new inputs for step s, the same for both nets */
static void feed(net *n, int s) {
  static float v[2 * 3 * 9 * 9];
  uint32_t state = 12345u + 977u * (uint32_t)s;
  for (int i = 0; i < NIN; i++) {
    int64_t count = parity_tensor_numel(n->in[i]);
    for (int64_t k = 0; k < count; k++) {
      state = state * 1664525u + 1013904223u;
      v[k] = (float)((double)(state >> 8) / (double)(1u << 24) * 2.0 - 1.0) * (i == 1 ? 0.3f : 1.0f);
    }
    OK(parity_tensor_write(n->in[i], v, (uint64_t)count * sizeof(float)));
  }
}

/* the step: temporaries released, the loss and the output of the pooling branch kept */
static parity_tensor_t *step(net *n, parity_tensor_t **avg) {
  for (int i = 0; i < NIN; i++)
    if (needs_grad[i]) parity_tensor_zero_grad(n->in[i]);
  parity_conv2d_options_t co;
  parity_conv2d_options_init(&co);
  co.stride[0] = co.stride[1] = 2;
  co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 1;
  parity_pool2d_options_t po;
  parity_pool2d_options_init(&po);
  po.kernel[0] = po.kernel[1] = 2;
  parity_tensor_t *t[16] = {0}, *total;
  OK(parity_conv2d(n->in[0], n->in[1], NULL, &co, &t[0]));   /* [2,4,5,5] */
  OK(parity_pool2d(PARITY_OP_MAX_POOL2D, t[0], &po, &t[1])); /* [2,4,2,2] */
  OK(parity_softmax(PARITY_OP_SOFTMAX, t[1], -1, &t[2]));    /* softmax over the last axis */
  OK(parity_matmul(n->in[2], n->in[3], &t[3]));              /* [2,7,6] */
  OK(parity_unary(PARITY_OP_TANH, t[3], &t[4]));             /* elementwise */
  OK(parity_reduce(PARITY_OP_SUM, t[2], 0x3, 1, &t[5]));     /* [1,1,2,2] */
  OK(parity_reduce(PARITY_OP_MEAN, t[4], 0x7, 0, &t[6]));    /* scalar */
  OK(parity_reduce(PARITY_OP_MAX, n->in[4], 0x2, 0, &t[7])); /* [6]: max backward */
  OK(parity_reduce(PARITY_OP_MIN, n->in[4], 0x1, 0, &t[8])); /* [10]: min backward */
  OK(parity_reduce(PARITY_OP_SUM, t[5], 0xf, 0, &t[9]));
  OK(parity_reduce(PARITY_OP_SUM, t[7], 0x1, 0, &t[10]));
  OK(parity_reduce(PARITY_OP_SUM, t[8], 0x1, 0, &t[11]));
  OK(parity_binary(PARITY_OP_MUL, t[6], t[6], &t[12]));
  OK(parity_binary(PARITY_OP_ADD, t[9], t[10], &t[13]));
  OK(parity_binary(PARITY_OP_ADD, t[11], t[12], &t[14]));
  OK(parity_binary(PARITY_OP_ADD, t[13], t[14], &total));
  OK(parity_backward(total, NULL, 0));
  OK(parity_pool2d(PARITY_OP_AVG_POOL2D, t[0], &po, avg)); /* [2,4,2,2] from the conv */
  for (int i = 0; i < 16; i++) parity_tensor_release(t[i]);
  return total;
}

/* the loss, the three gradients and the average pooling's output, as bits */
static void read_out(net *n, parity_tensor_t *total, parity_tensor_t *avg, float *out) {
  OK(parity_tensor_to_host(total, out, sizeof(float)));
  OK(parity_tensor_to_host(parity_tensor_grad(n->in[1]), out + 1, 108 * sizeof(float)));
  OK(parity_tensor_to_host(parity_tensor_grad(n->in[3]), out + 109, 30 * sizeof(float)));
  OK(parity_tensor_to_host(parity_tensor_grad(n->in[4]), out + 139, 60 * sizeof(float)));
  OK(parity_tensor_to_host(avg, out + 199, 32 * sizeof(float)));
}

Test(cuda_plan_emu, replays_with_new_inputs_give_the_eager_bits_across_families, .timeout = 300) {
  parity_device_t *dev = pt_try_device("cuda");
  if (!dev) cr_skip_test("no cuda device (the emulated driver is not on the library path)");
  static float eager[REPLAYS][NOUT], replay[REPLAYS][NOUT];
  net e = net_new(dev), r = net_new(dev);
  for (int s = 0; s < REPLAYS; s++) {
    feed(&e, s);
    parity_tensor_t *avg, *total = step(&e, &avg);
    read_out(&e, total, avg, eager[s]);
    parity_tensor_release(total);
    parity_tensor_release(avg);
  }
  feed(&r, 0);
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *avg, *total = step(&r, &avg);
  OK(parity_plan_end(plan));
  cr_assert_eq(fake_int("fake_cuda_graphs"), 2, "the plugin prepared the plan as a graph (and its executable)");
  for (int s = 0; s < REPLAYS; s++) {
    feed(&r, s);
    int launches = fake_int("fake_cuda_graph_launches");
    OK(parity_plan_replay(plan));
    cr_assert_eq(fake_int("fake_cuda_graph_launches"), launches + 1, "replay %d is one graph launch", s);
    read_out(&r, total, avg, replay[s]);
  }
  for (int s = 0; s < REPLAYS; s++)
    for (int k = 0; k < NOUT; k++)
      cr_assert_eq(memcmp(&eager[s][k], &replay[s][k], sizeof(float)), 0,
                   "replay %d, value %d (%s): eager %.9g, replayed %.9g", s, k,
                   k == 0    ? "loss"
                   : k < 109 ? "conv weight grad"
                   : k < 139 ? "matmul grad"
                   : k < 199 ? "max/min grad"
                             : "avg pool",
                   eager[s][k], replay[s][k]);
  /* the inputs changed the results: a replay that ignored them would not match every step */
  cr_assert_neq(memcmp(eager[0], eager[1], sizeof eager[0]), 0);
  parity_tensor_release(total);
  parity_tensor_release(avg);
  parity_plan_destroy(plan);
  cr_expect_eq(fake_int("fake_cuda_graphs"), 0, "destroying the plan releases its graphs");
  for (int i = 0; i < NIN; i++) parity_tensor_release(e.in[i]), parity_tensor_release(r.in[i]);
}

/* A plan owns its scratch: eager work after the capture that grows the device's own scratch (and
 * frees the old one) leaves the replays alone. A graph that had captured the device's scratch would
 * replay into freed memory, which the emulated driver refuses (a launch with a freed pointer). */
Test(cuda_plan_emu, eager_work_that_grows_the_scratch_leaves_the_replays_alone, .timeout = 120) {
  parity_device_t *dev = pt_try_device("cuda");
  if (!dev) cr_skip_test("no cuda device (the emulated driver is not on the library path)");
  static float eager[NOUT], replay[NOUT];
  net e = net_new(dev), r = net_new(dev);
  feed(&e, 1);
  parity_tensor_t *avg, *total = step(&e, &avg); /* eagerly: the device's scratch holds the tie counts */
  read_out(&e, total, avg, eager);
  parity_tensor_release(total);
  parity_tensor_release(avg);
  feed(&r, 0);
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  total = step(&r, &avg);
  OK(parity_plan_end(plan));
  /* max over the rows of [10000, 2] and its backward: 80,000 bytes of tie counts, more than the
   * device's scratch (64 KiB), which grows */
  parity_tensor_t *big, *m, *s;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){10000, 2}, &big));
  OK(parity_tensor_set_requires_grad(big, 1));
  OK(parity_reduce(PARITY_OP_MAX, big, 0x2, 0, &m));
  OK(parity_reduce(PARITY_OP_SUM, m, 0x1, 0, &s));
  OK(parity_backward(s, NULL, 0));
  parity_tensor_release(s);
  parity_tensor_release(m);
  parity_tensor_release(big);
  feed(&r, 1);
  OK(parity_plan_replay(plan));
  read_out(&r, total, avg, replay);
  for (int k = 0; k < NOUT; k++)
    cr_assert_eq(memcmp(&eager[k], &replay[k], sizeof(float)), 0, "value %d: eager %.9g, replayed %.9g", k, eager[k],
                 replay[k]);
  parity_tensor_release(total);
  parity_tensor_release(avg);
  parity_plan_destroy(plan);
  for (int i = 0; i < NIN; i++) parity_tensor_release(e.in[i]), parity_tensor_release(r.in[i]);
}
