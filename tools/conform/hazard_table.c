/* hazard_table.c — the named hazard cases, one file each (hazard_<name>.c), all with the
 * cf_check_fn signature: fill a result for the device in env. They come from the problem list in
 * the design brief; docs/conformance.md states each rule. The mask case runs at op level, the
 * others through the autodiff tape (helpers in hazard_tape.c). */
#include "conform.h"

void cf_hazard_mask_under_gradient(cf_env_t *env, cf_result_t *r);
void cf_hazard_mask_under_gradient_tape(cf_env_t *env, cf_result_t *r);
void cf_hazard_lowprec_logsoftmax_after_conv(cf_env_t *env, cf_result_t *r);
void cf_hazard_eager_vs_replay(cf_env_t *env, cf_result_t *r);
void cf_hazard_eager_vs_replay_reductions(cf_env_t *env, cf_result_t *r);
void cf_hazard_trajectory_convergent(cf_env_t *env, cf_result_t *r);
void cf_hazard_trajectory_divergent(cf_env_t *env, cf_result_t *r);
#define ZOO_DECL(fn) void fn(cf_env_t *env, cf_result_t *r);
/* the layer zoo: each case's name (a string, so that no formatter can respace it) and function */
// clang-format off
#define ZOO_LIST(X) \
  X("dense", cf_hazard_zoo_dense) \
  X("chain-dense-tanh-dense", cf_hazard_zoo_chain) \
  X("chain-float64", cf_hazard_zoo_chain_f64) \
  X("scale", cf_hazard_zoo_scale) \
  X("conv", cf_hazard_zoo_conv) \
  X("chain-conv-conv", cf_hazard_zoo_conv_conv) \
  X("conv-meanpool-same", cf_hazard_zoo_conv_meanpool) \
  X("maxout", cf_hazard_zoo_maxout) \
  X("skip-connection", cf_hazard_zoo_skip) \
  X("bilinear", cf_hazard_zoo_bilinear) \
  X("conv-transpose", cf_hazard_zoo_conv_transpose) \
  X("layer-norm", cf_hazard_zoo_layer_norm) \
  X("batch-norm", cf_hazard_zoo_batch_norm) \
  X("multi-head-attention", cf_hazard_zoo_mha)
// clang-format on
#define ZOO_D(name, fn) ZOO_DECL(fn)
ZOO_LIST(ZOO_D)
#define ZOO_ENTRY(name, fn) {"hazard.layer-zoo." name, "tape", fn},

const cf_check_t cf_hazard_checks[] = {
    {"hazard.mask-under-gradient", "eq+where", cf_hazard_mask_under_gradient},
    {"hazard.mask-under-gradient.tape", "tape", cf_hazard_mask_under_gradient_tape},
    {"hazard.lowprec-logsoftmax-after-conv", "conv2d+log_softmax", cf_hazard_lowprec_logsoftmax_after_conv},
    {"hazard.eager-vs-replay", "plan", cf_hazard_eager_vs_replay},
    {"hazard.eager-vs-replay.reductions", "plan", cf_hazard_eager_vs_replay_reductions},
    {"hazard.trajectory.convergent", "adam", cf_hazard_trajectory_convergent},
    {"hazard.trajectory.divergent", "adam", cf_hazard_trajectory_divergent},
    ZOO_LIST(ZOO_ENTRY)};
const size_t cf_hazard_check_count = sizeof cf_hazard_checks / sizeof cf_hazard_checks[0];
