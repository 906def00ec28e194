/* plan.c — capture and replay. While a plan records, every command the core issues on the
 * device (op launches and fills) is copied into the plan, and every storage it touches is
 * retained, so replay re-issues the same kernels in the same order on the same buffers (less what
 * plan_prune.c leaves out): every tensor the caller holds gets the bits of eager execution, and
 * replay allocates nothing.
 *
 * A plan binds storages, not their contents. Host writes (parity_tensor_write, from_host) are
 * not commands: data written during recording stays in its storage, and data written between
 * replays is what the next replay computes with — that is how a prepared step takes new inputs.
 * The plan keeps every storage it touched alive, so releasing or reshaping a captured tensor
 * afterwards cannot make replay touch freed memory.
 *
 * At plan_end the commands a replay need not issue are left out (plan_prune.c: results no tensor
 * can reach, and results that would be the same bits every replay), the rest become a flat list of
 * prepared launches (descriptor pointers fixed, kernel entries resolved), and a plugin that offers the optional plan entries (ABI 1.1:
 * plan_prepare/run/release) receives the whole list once, to replay it its own way (a CUDA
 * graph, a recorded command buffer, kernels with their geometry derived once). A plugin may
 * decline (UNSUPPORTED); replay then calls the entries one by one. PARITY_PLAN_PREPARE=0 makes
 * the host never offer it (to compare both replays). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "parity_support/env.h"
#include "parity_support/ops.h"

/* Destroyed plans wait in a quarantine (the last 64, process-wide) marked dead before their memory
 * is freed, so destroying, ending or replaying one again is refused with a message instead of
 * touching freed memory, as a tensor's double release is. Older ones cannot be told apart from live
 * memory; sanitizer builds catch those. */
#define PLAN_LIVE 0x504c414eu
#define PLAN_DEAD 0x64656164u
#define PLAN_QUARANTINE 64
static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;
static parity_plan_t *quarantine[PLAN_QUARANTINE];
static unsigned quarantine_next;

static void plan_retire(parity_plan_t *p) {
  p->magic = PLAN_DEAD;
  pthread_mutex_lock(&quarantine_lock);
  parity_plan_t *old = quarantine[quarantine_next];
  quarantine[quarantine_next] = p;
  quarantine_next = (quarantine_next + 1) % PLAN_QUARANTINE;
  pthread_mutex_unlock(&quarantine_lock);
  free(old);
}

static int plan_dead(const parity_plan_t *p, const char *what) {
  if (p->magic == PLAN_LIVE) return 0;
  parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
               "%s: the plan was already destroyed (parity_plan_destroy called "
               "twice, or the plan used after it)",
               what);
  return 1;
}

/* The thread that records: ops another thread issues on the device meanwhile run eagerly and are
 * not recorded (the header's "by this thread"). */
static _Thread_local char thread_token;
const void *parity__thread_token(void) { return &thread_token; }

/* The plugin's plan entries when it offers all three (ABI 1.1) and the user did not turn
 * them off; NULL otherwise. */
static const parity_plugin_api_t *plan_api(const parity_device_t *dev) {
  const parity_plugin_api_t *api = parity__device_api(dev);
  if (!PARITY_HAS_FIELD(api, parity_plugin_api_t, plan_release) || !api->plan_prepare || !api->plan_run ||
      !api->plan_release)
    return NULL;
  int on = 1; /* parity_context_create refused a value that is not a flag */
  psup_env_flag("PARITY_PLAN_PREPARE", 1, &on, NULL, 0);
  return on ? api : NULL;
}

/* Offer the prepared list to the plugin. A refusal (UNSUPPORTED) keeps the host's replay; any
 * other failure, or success without a plan, fails plan_end: the plugin's answer is untrusted. */
static parity_status_t offer_plan(parity_plan_t *p) {
  const parity_plugin_api_t *api = plan_api(p->dev);
  if (!api || p->count == 0 || p->count > UINT32_MAX) return PARITY_STATUS_OK;
  parity_plan_command_t *cmds = calloc(p->count, sizeof *cmds);
  if (!cmds) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_end: out of host memory");
  for (uint64_t i = 0; i < p->count; i++) {
    const plan_cmd *c = &p->cmds[i];
    parity_plan_command_t *o = &cmds[i];
    o->struct_size = sizeof *o;
    if (c->kind == CMD_LAUNCH) {
      o->kind = PARITY_PLAN_COMMAND_KERNEL;
      o->op = &c->desc;
    } else {
      o->kind = PARITY_PLAN_COMMAND_FILL;
      o->buffer = c->st->buf->handle;
      o->offset_bytes = c->off;
      o->size_bytes = c->size;
      memcpy(o->pattern, c->pattern, sizeof o->pattern);
      o->pattern_size = c->psize;
    }
  }
  parity_plugin_plan_t *h = NULL;
  parity__clear_error();
  int32_t st = api->plan_prepare(p->dev->handle, cmds, (uint32_t)p->count, &h);
  free(cmds);
  const char *name = parity_device_plugin_name(p->dev);
  if (st == PARITY_STATUS_UNSUPPORTED) {
    parity__log(p->dev->ctx, 2,
                "plan: '%s' declined to prepare a plan of %llu commands (%s); the host "
                "replays it command by command",
                name, (unsigned long long)p->count, parity_last_error());
    if (h) api->plan_release(p->dev->handle, h);
    parity__clear_error();
    return PARITY_STATUS_OK;
  }
  if (st != PARITY_STATUS_OK) {
    char inner[512];
    snprintf(inner, sizeof inner, "%s", parity_last_error()[0] ? parity_last_error() : psup_status_name(st));
    return parity__fail(st, "plan_end: '%s' failed to prepare the plan (%llu commands): %s", name,
                        (unsigned long long)p->count, inner);
  }
  if (!h)
    return parity__fail(PARITY_STATUS_INTERNAL,
                        "plan_end: plugin '%s' said plan_prepare succeeded but returned "
                        "no plan",
                        name);
  p->prepared = h;
  p->run = api->plan_run;
  p->handle = p->dev->handle;
  parity__log(p->dev->ctx, 2, "plan: '%s' prepared a plan of %llu commands; replays run it whole", name,
              (unsigned long long)p->count);
  return PARITY_STATUS_OK;
}

parity_status_t parity_plan_begin(parity_device_t *dev, parity_plan_t **out) {
  if (!dev || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "plan_begin: NULL argument");
  *out = NULL;
  if (dev->capture)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "plan_begin: device '%s' is already recording "
                        "a plan; end it first",
                        parity_device_plugin_name(dev));
  parity_plan_t *p = calloc(1, sizeof *p);
  if (!p) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_begin: out of host memory");
  p->dev = dev;
  p->recording = 1;
  p->magic = PLAN_LIVE;
  dev->capture_thread = parity__thread_token();
  dev->capture = p;
  parity__context_retain(dev->ctx); /* the plan keeps its device open */
  *out = p;
  return PARITY_STATUS_OK;
}

parity_status_t parity_plan_end(parity_plan_t *p) {
  if (!p) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "plan_end: plan is NULL");
  if (plan_dead(p, "plan_end")) return PARITY_STATUS_INVALID_ARGUMENT;
  if (!p->recording) return parity__fail(PARITY_STATUS_FAILED_PRECONDITION, "plan_end: plan is not recording");
  p->recording = 0;
  p->dev->capture = NULL;
  if (p->failed)
    return parity__fail(PARITY_STATUS_OUT_OF_MEMORY,
                        "plan_end: ran out of host memory while "
                        "recording; the plan cannot be replayed");
  if (parity__plan_prune(p) != 0) /* out of host memory: every command stays, as correct */
    parity__log(p->dev->ctx, 1, "plan: out of host memory while pruning; every recorded command is replayed");
  if (p->recorded != p->count)
    parity__log(p->dev->ctx, 2,
                "plan: %llu commands recorded, %llu replayed (%llu with results no one can read, %llu with "
                "the same results on every replay; PARITY_PLAN_PRUNE=0 keeps them)",
                (unsigned long long)p->recorded, (unsigned long long)p->count, (unsigned long long)p->unobservable,
                (unsigned long long)p->constant);
  /* Prepare the flat list: every command was validated and accepted by supports() when it ran
   * eagerly during recording, so replay calls the kernel entries directly with descriptors
   * whose pointers are fixed here (the array no longer moves). */
  for (uint64_t i = 0; i < p->count; i++) {
    plan_cmd *c = &p->cmds[i];
    if (c->kind != CMD_LAUNCH) continue;
    for (uint32_t k = 0; k < c->desc.num_inputs; k++)
      if (c->desc.inputs[k]) c->desc.inputs[k] = &c->tensors[k];
    for (uint32_t k = 0; k < c->desc.num_outputs; k++)
      if (c->desc.outputs[k]) c->desc.outputs[k] = &c->tensors[PARITY_MAX_INPUTS + k];
    c->fn = parity__device_entry(p->dev, &c->desc);
  }
  parity_status_t st = offer_plan(p);
  if (st != PARITY_STATUS_OK) p->failed = 1;
  return st;
}

/* Append st to a grown list of storages; 0, or -1 (p->failed set) when host memory ran out. */
static int append(parity_plan_t *p, parity__storage ***list, uint64_t *n, uint64_t *cap, parity__storage *st) {
  if (*n == *cap) {
    uint64_t grown = *cap ? *cap * 2 : 64;
    parity__storage **l = realloc(*list, grown * sizeof *l);
    if (!l) {
      p->failed = 1;
      return -1;
    }
    *list = l;
    *cap = grown;
  }
  (*list)[(*n)++] = st;
  return 0;
}

static void hold(parity_plan_t *p, parity__storage *st) {
  for (uint64_t i = p->nheld; i > 0 && i + 8 > p->nheld; i--) /* recent ones repeat most */
    if (p->held[i - 1] == st) return;
  if (append(p, &p->held, &p->nheld, &p->capheld, st) != 0) return;
  st->refs++;
  st->plan_holds++;
}

static plan_cmd *push(parity_plan_t *p) {
  if (p->count == p->cap) {
    uint64_t cap = p->cap ? p->cap * 2 : 64;
    plan_cmd *c = realloc(p->cmds, cap * sizeof *c);
    if (!c) {
      p->failed = 1;
      return NULL;
    }
    p->cmds = c;
    p->cap = cap;
  }
  plan_cmd *c = &p->cmds[p->count++];
  memset(c, 0, sizeof *c);
  return c;
}

void parity__plan_record_launch(parity_plan_t *p, const parity_op_desc_t *d, parity__storage *const *in_st,
                                parity__storage *const *out_st) {
  plan_cmd *c = push(p);
  if (!c) return;
  c->kind = CMD_LAUNCH;
  c->desc = *d;
  /* tensor descriptors are stored by value; pointers are fixed up at replay (cmds may move) */
  for (uint32_t i = 0; i < d->num_inputs; i++)
    if (d->inputs[i]) {
      c->tensors[i] = *d->inputs[i];
      c->sts[i] = in_st[i];
      hold(p, in_st[i]);
    }
  for (uint32_t i = 0; i < d->num_outputs; i++)
    if (d->outputs[i]) {
      c->tensors[PARITY_MAX_INPUTS + i] = *d->outputs[i];
      c->sts[PARITY_MAX_INPUTS + i] = out_st[i];
      hold(p, out_st[i]);
    }
}

void parity__plan_record_fill(parity_plan_t *p, parity__storage *st, uint64_t off, uint64_t size, const void *pattern,
                              uint32_t psize) {
  plan_cmd *c = push(p);
  if (!c) return;
  c->kind = CMD_FILL;
  c->st = st;
  c->off = off;
  c->size = size;
  memcpy(c->pattern, pattern, psize);
  c->psize = psize;
  st->plan_fills++; /* its contents are the plan's constant now: parity_tensor_write refuses */
  hold(p, st);
}

void parity__plan_host_write(parity_plan_t *p, parity__storage *st) {
  hold(p, st);
  append(p, &p->written, &p->nwritten, &p->capwritten, st); /* no reference of its own: `held` has one */
}

/* A command failed in replay: name it, keeping what the plugin said. */
static parity_status_t plan_failed(parity_device_t *dev, int32_t st, uint64_t index, const parity_op_desc_t *d) {
  char inner[768];
  snprintf(inner, sizeof inner, "%s", parity_last_error()[0] ? parity_last_error() : psup_status_name(st));
  if (d)
    return parity__fail(st, "plan_replay: command %llu (%s %s) failed on '%s': %s", (unsigned long long)index,
                        psup_op_name(d->op), psup_direction_name(d->direction), parity_device_plugin_name(dev), inner);
  return parity__fail(st, "plan_replay: command %llu (fill) failed on '%s': %s", (unsigned long long)index,
                      parity_device_plugin_name(dev), inner);
}

parity_status_t parity_plan_replay(parity_plan_t *p) {
  if (!p) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "plan_replay: plan is NULL");
  if (__builtin_expect(p->magic != PLAN_LIVE, 0) && plan_dead(p, "plan_replay")) return PARITY_STATUS_INVALID_ARGUMENT;
  if (p->recording)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "plan_replay: the plan is still recording; call "
                        "parity_plan_end first");
  if (p->failed)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "plan_replay: the plan failed to record or "
                        "prepare (plan_end said why)");
  parity__clear_error();
  if (p->prepared) {
    int32_t st = p->run(p->handle, p->prepared);
    __builtin_prefetch(p); /* for the next replay (see cpu_plan_run): a cache-sized kernel evicted it */
    if (st == PARITY_STATUS_OK) return PARITY_STATUS_OK;
    char inner[768];
    snprintf(inner, sizeof inner, "%s", parity_last_error()[0] ? parity_last_error() : psup_status_name(st));
    return parity__fail(st, "plan_replay: the prepared plan (%llu commands) failed on '%s': %s",
                        (unsigned long long)p->count, parity_device_plugin_name(p->dev), inner);
  }
  const parity_plugin_api_t *api = parity__device_api(p->dev);
  parity_plugin_device_t *h = p->dev->handle;
  for (uint64_t i = 0; i < p->count; i++) {
    const plan_cmd *c = &p->cmds[i];
    int32_t st = c->kind == CMD_LAUNCH ? c->fn(h, &c->desc)
                                       : api->buffer_fill(h, c->st->buf->handle, c->off, c->size, c->pattern, c->psize);
    if (st != PARITY_STATUS_OK) return plan_failed(p->dev, st, i, c->kind == CMD_LAUNCH ? &c->desc : NULL);
  }
  return PARITY_STATUS_OK;
}

uint64_t parity_plan_command_count(const parity_plan_t *p) { return p && p->magic == PLAN_LIVE ? p->count : 0; }

void parity_plan_destroy(parity_plan_t *p) {
  if (!p || plan_dead(p, "plan_destroy")) return;
  if (p->recording) p->dev->capture = NULL;
  if (p->prepared) parity__device_api(p->dev)->plan_release(p->dev->handle, p->prepared); /* before its buffers go */
  for (uint64_t i = 0; i < p->count; i++)
    if (p->cmds[i].kind == CMD_FILL) p->cmds[i].st->plan_fills--;
  for (uint64_t i = 0; i < p->nheld; i++) {
    p->held[i]->plan_holds--;
    parity__storage_release(p->held[i]);
  }
  free(p->cmds);
  free(p->held);
  free(p->written);
  parity_context_t *ctx = p->dev->ctx;
  plan_retire(p);
  parity__context_release(ctx);
}
