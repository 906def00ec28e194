/* support_list.c — `parity-conform --support`: for every op × dtype × direction among the
 * selected cases, whether the device's supports() accepts it, with the plugin's reason when not.
 * Each triple is asked with the descriptors of its first selected case in table order (the
 * special-values or plain variant, not a view). Nothing runs. */
#include <stdio.h>
#include <string.h>

#include "conform.h"

static int same_triple(const cf_case_t *a, const cf_case_t *b) {
  return a->op == b->op && a->direction == b->direction && !strcmp(a->dtype_label, b->dtype_label);
}

void cf_print_support(cf_env_t *env, const cf_case_list_t *cases, const unsigned char *selected) {
  printf("\n== %s: %s; supports() per op, dtype and direction ==\n", env->backend, env->info.name);
  size_t yes = 0, no = 0;
  for (size_t i = 0; i < cases->count; i++) {
    const cf_case_t *c = &cases->items[i];
    if (!selected[i] || c->mode == CF_MODE_FD || c->expect_error) continue;
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++)
      seen = selected[k] && cases->items[k].mode != CF_MODE_FD && !cases->items[k].expect_error &&
             same_triple(&cases->items[k], c);
    if (seen) continue;
    char msg[512];
    cf_exec_status_t st = cf_case_supports(env, c, msg, sizeof msg);
    const char *what = st == CF_EXEC_OK ? "supported" : st == CF_EXEC_UNSUPPORTED ? "unsupported" : "rejected";
    yes += st == CF_EXEC_OK;
    no += st != CF_EXEC_OK;
    printf("%-12s %-10s %-9s %s%s%s\n", psup_op_name(c->op), c->dtype_label, psup_direction_name(c->direction), what,
           st == CF_EXEC_OK ? "" : ": ", st == CF_EXEC_OK ? "" : msg);
  }
  printf("%s: %zu supported, %zu not\n", env->backend, yes, no);
}
