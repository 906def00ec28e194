/* plan_internal.h — a recorded plan's commands, shared by plan.c (capture and replay) and
 * plan_prune.c (what a replay can leave out). */
#ifndef PARITY_PLAN_INTERNAL_H
#define PARITY_PLAN_INTERNAL_H

#include "tensor_internal.h"

typedef enum { CMD_LAUNCH, CMD_FILL } cmd_kind;

typedef struct plan_cmd {
  cmd_kind kind;
  parity_kernel_fn fn;   /* the plugin's entry, resolved at plan_end */
  parity_op_desc_t desc; /* at plan_end its pointers are fixed to `tensors` below */
  parity_tensor_desc_t tensors[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  /* LAUNCH: the storage of each tensor slot (NULL where the op has none), as `tensors` */
  parity__storage *sts[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  parity__storage *st; /* FILL target */
  uint64_t off, size;
  unsigned char pattern[8];
  uint32_t psize;
} plan_cmd;

struct parity_plan_t {
  /* replay reads these first, from one cache line: the plugin's plan_run and device handle are
   * copied here at plan_end, not reached through dev -> plugin -> module on every replay (each a
   * dependent load that the data of a cache-sized kernel has just evicted from L1) */
  parity_plugin_plan_t *prepared; /* the plugin's own plan (plan_prepare), or NULL */
  int32_t (*run)(parity_plugin_device_t *, parity_plugin_plan_t *);
  parity_plugin_device_t *handle;
  int recording;
  int failed; /* host memory ran out while recording */
  parity_device_t *dev;
  plan_cmd *cmds;
  uint64_t count, cap;
  parity__storage **held;
  uint64_t nheld, capheld;
  parity__storage **written; /* storages the host wrote while recording (parity_tensor_write) */
  uint64_t nwritten, capwritten;
  uint64_t recorded;     /* commands recorded; count is those a replay issues (plan_prune.c) */
  uint64_t unobservable; /* of the recorded, left out: results no one can read */
  uint64_t constant;     /* of the recorded, left out: the same results on every replay */
  uint32_t magic;        /* PLAN_LIVE; PLAN_DEAD once destroyed (kept a while in the quarantine below) */
};

/* At plan_end, before the descriptors' pointers are fixed: drop from p->cmds the commands a replay
 * need not issue (plan_prune.c says which and why), compacting the list; p->count becomes the
 * commands kept. Returns 0, or -1 when host memory ran out (the plan is then left whole). */
int parity__plan_prune(parity_plan_t *p);

#endif
