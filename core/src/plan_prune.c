/* plan_prune.c — the commands a replay can leave out of a recorded plan.
 *
 * A plan binds storages, and the host reaches a storage only through a tensor. At plan_end a
 * storage that no tensor references any more (every reference left is this plan's: a temporary of
 * the recorded step, released while it recorded) is the plan's own: from then on only the plan's
 * commands read or write it. Two kinds of command then change nothing anyone can see:
 *   - unobservable: every storage it writes is the plan's own and no kept command reads it (a
 *     loss computed and released unread, and what only such commands read);
 *   - constant: every storage it writes is the plan's own and written by it alone, it reads none
 *     of them, and every storage it reads is the plan's own and written by exactly one earlier
 *     command that is itself constant (a backward pass's seed of ones, and what is computed from
 *     it alone): every replay would write the same bits again. Its results, computed while the
 *     plan recorded, stay where they are.
 * A replay leaves both out, and every command it keeps reads bitwise what it read before. A
 * storage the host wrote while recording (parity_tensor_write), or that no command writes, is never
 * taken as constant: the host's data may have changed between a command's read and plan_end.
 * Storages count whole: a command that writes part of one writes it. Ops never alias except an
 * elementwise op in place, which reads what it writes (so it is never constant).
 * PARITY_PLAN_PRUNE=0 keeps every command (to compare; parity_context_create checks the value). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "parity_support/env.h"
#include "parity_support/operands.h"

typedef struct sinfo {
  parity__storage *st;
  uint64_t holds;   /* this plan's references */
  uint64_t writers; /* commands writing it */
  uint64_t writer;  /* the last of them */
  unsigned char own, live, host;
} sinfo;

enum { SLOTS = PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS };

/* The storages command c reads (r: only those whose values it uses) and writes (w); counts in *nr,
 * *nw. */
static void uses(const plan_cmd *c, parity__storage **r, uint32_t *nr, parity__storage **w, uint32_t *nw) {
  *nr = *nw = 0;
  if (c->kind == CMD_FILL) {
    w[(*nw)++] = c->st;
    return;
  }
  for (uint32_t k = 0; k < c->desc.num_inputs && k < PARITY_MAX_INPUTS; k++)
    if (c->sts[k] && !psup_operand_values_unused(c->desc.op, c->desc.direction, k)) r[(*nr)++] = c->sts[k];
  for (uint32_t k = 0; k < c->desc.num_outputs && k < PARITY_MAX_OUTPUTS; k++)
    if (c->sts[PARITY_MAX_INPUTS + k]) w[(*nw)++] = c->sts[PARITY_MAX_INPUTS + k];
}

static int by_storage(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const sinfo *)a)->st, y = (uintptr_t)((const sinfo *)b)->st;
  return (x > y) - (x < y);
}

static sinfo *find(sinfo *v, uint64_t n, const parity__storage *st) {
  sinfo key = {.st = (parity__storage *)st};
  return bsearch(&key, v, n, sizeof *v, by_storage);
}

int parity__plan_prune(parity_plan_t *p) {
  p->recorded = p->count;
  p->unobservable = p->constant = 0;
  int on = 1; /* parity_context_create refused a value that is not a flag */
  psup_env_flag("PARITY_PLAN_PRUNE", 1, &on, NULL, 0);
  uint64_t n = p->count;
  if (!on || n == 0) return 0;
  sinfo *info = calloc(n * SLOTS, sizeof *info);
  unsigned char *needed = calloc(n, 1), *constant = calloc(n, 1);
  if (!info || !needed || !constant) {
    free(info);
    free(needed);
    free(constant);
    return -1;
  }
  /* every storage a command touches, once */
  uint64_t ns = 0;
  parity__storage *r[SLOTS], *w[SLOTS];
  uint32_t nr, nw;
  for (uint64_t c = 0; c < n; c++) {
    uses(&p->cmds[c], r, &nr, w, &nw);
    for (uint32_t k = 0; k < nr; k++) info[ns++].st = r[k];
    for (uint32_t k = 0; k < nw; k++) info[ns++].st = w[k];
  }
  qsort(info, ns, sizeof *info, by_storage);
  uint64_t u = 0;
  for (uint64_t i = 0; i < ns; i++)
    if (u == 0 || info[u - 1].st != info[i].st) info[u++] = info[i];
  ns = u;
  sinfo *s;
  for (uint64_t i = 0; i < p->nheld; i++)
    if ((s = find(info, ns, p->held[i]))) s->holds++;
  for (uint64_t i = 0; i < p->nwritten; i++)
    if ((s = find(info, ns, p->written[i]))) s->host = 1;
  for (uint64_t i = 0; i < ns; i++) {
    info[i].own = info[i].st->refs > 0 && (uint64_t)info[i].st->refs == info[i].holds;
    info[i].live = !info[i].own; /* the host can read it */
  }
  for (uint64_t c = 0; c < n; c++) {
    uses(&p->cmds[c], r, &nr, w, &nw);
    for (uint32_t k = 0; k < nw; k++) {
      s = find(info, ns, w[k]);
      s->writers++;
      s->writer = c;
    }
  }
  /* constant, in recording order (a constant command's inputs come from earlier ones) */
  for (uint64_t c = 0; c < n; c++) {
    uses(&p->cmds[c], r, &nr, w, &nw);
    int ok = nw > 0;
    for (uint32_t k = 0; k < nw && ok; k++) {
      s = find(info, ns, w[k]);
      ok = s->own && !s->host && s->writers == 1;
    }
    for (uint32_t k = 0; k < nr && ok; k++) {
      s = find(info, ns, r[k]);
      ok = s->own && !s->host && s->writers == 1 && s->writer < c && constant[s->writer];
    }
    constant[c] = (unsigned char)ok;
  }
  /* needed (of the others): writes a storage someone can read; what a needed command reads
   * becomes readable. A replay repeats, so a read needs the writers after it as well as those
   * before: sweep until nothing changes. A constant command never runs again: its reads need
   * nothing. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint64_t c = n; c-- > 0;) {
      if (constant[c]) continue;
      uses(&p->cmds[c], r, &nr, w, &nw);
      for (uint32_t k = 0; k < nw && !needed[c]; k++) needed[c] = find(info, ns, w[k])->live;
      if (!needed[c]) continue;
      for (uint32_t k = 0; k < nr; k++) {
        s = find(info, ns, r[k]);
        if (!s->live) s->live = changed = 1;
      }
    }
  }
  uint64_t kept = 0;
  for (uint64_t c = 0; c < n; c++) {
    plan_cmd *cmd = &p->cmds[c];
    if (needed[c]) {
      if (kept != c) p->cmds[kept] = *cmd;
      kept++;
      continue;
    }
    if (constant[c])
      p->constant++;
    else
      p->unobservable++;
    if (cmd->kind == CMD_FILL) cmd->st->plan_fills--; /* no replay refills it: only the plan can see it */
  }
  p->count = kept;
  free(info);
  free(needed);
  free(constant);
  return 0;
}
