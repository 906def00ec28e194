/* hazard_table.c — the named hazard cases, one file each (hazard_<name>.c), all with the
 * cf_check_fn signature: fill a result for the device in env. They come from the problem list in
 * the design brief. Cases that need the autodiff tensor API (eager vs replay, training
 * trajectories, the layer zoo, log_softmax after a bf16 conv through the tape) join this table
 * when that API exists; docs/conformance.md lists what each will need. */
#include "conform.h"

void cf_hazard_mask_under_gradient(cf_env_t *env, cf_result_t *r);

const cf_check_t cf_hazard_checks[] = {
    {"hazard.mask-under-gradient", "eq+where", cf_hazard_mask_under_gradient},
};
const size_t cf_hazard_check_count = sizeof cf_hazard_checks / sizeof cf_hazard_checks[0];
