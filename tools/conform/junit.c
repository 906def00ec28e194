/* junit.c — `--junit FILE`: JUnit XML for CI systems. One <testsuite> per backend (its name is the
 * backend and device), one <testcase> per row: a FAIL is a <failure> carrying the message, the
 * operands and the reproduce command; unsupported and skipped rows are <skipped> with the reason.
 * A backend whose verdict is NOTHING CHECKED gets one failing testcase "verdict", so a CI system
 * that counts failures does not read it as green. The seed is a suite property. */
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "parity_support/atomic_file.h"

static void xml_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    switch (ch) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if (ch < 0x20 && ch != '\n' && ch != '\t')
          fputc(' ', f);
        else
          fputc(ch, f);
    }
  }
}

int cf_write_junit(const cf_report_t *rep, const char *path) {
  psup_atomic_file af; /* a crash or a full disk leaves the previous report */
  if (psup_atomic_open(&af, path, 0, NULL, 0) != 0) return -1;
  FILE *f = af.f;
  size_t tests = 0, failures = 0, skipped = 0;
  for (size_t i = 0; i < rep->backend_count; i++) {
    cf_coverage_t cov;
    cf_coverage(rep, &rep->backends[i], &cov);
    tests += rep->backends[i].count + (cov.verdict == CF_VERDICT_NOTHING);
    failures += rep->backends[i].fail + (cov.verdict == CF_VERDICT_NOTHING);
    skipped += rep->backends[i].unsupported + rep->backends[i].skipped;
  }
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"parity-conform\" tests=\"%zu\" "
          "failures=\"%zu\" skipped=\"%zu\">\n",
          tests, failures, skipped);
  for (size_t i = 0; i < rep->backend_count; i++) {
    const cf_backend_summary_t *b = &rep->backends[i];
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    int nothing = cov.verdict == CF_VERDICT_NOTHING;
    fprintf(f, "  <testsuite name=\"");
    xml_text(f, b->backend);
    fprintf(f, "\" hostname=\"");
    xml_text(f, b->device);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n", b->count + (size_t)nothing,
            b->fail + (size_t)nothing, b->unsupported + b->skipped, b->seconds);
    fprintf(f,
            "    <properties><property name=\"seed\" value=\"%llu\"/><property name=\"full\" value=\"%d\"/>"
            "</properties>\n",
            (unsigned long long)rep->seed, rep->full);
    char text[1024];
    cf_verdict_text(b, &cov, text, sizeof text);
    if (nothing) {
      fprintf(f, "    <testcase classname=\"%s\" name=\"verdict\"><failure message=\"", b->backend);
      xml_text(f, text);
      fprintf(f, "\"/></testcase>\n");
    }
    for (size_t j = b->first; j < b->first + b->count; j++) {
      const cf_result_t *r = &rep->results[j];
      fprintf(f, "    <testcase classname=\"");
      xml_text(f, b->backend);
      fprintf(f, ".%s\" name=\"", cf_result_family(r));
      xml_text(f, r->id);
      fprintf(f, "\" time=\"%.4f\"", r->seconds);
      if (r->status == CF_PASS) {
        fprintf(f, "/>\n");
        continue;
      }
      fprintf(f, ">");
      if (r->status == CF_FAIL) {
        char cmd[1536];
        cf_reproduce_command(rep, r, cmd, sizeof cmd);
        fprintf(f, "<failure message=\"");
        xml_text(f, r->message);
        fprintf(f, "\">");
        xml_text(f, r->message);
        if (r->operands[0]) {
          fprintf(f, "\noperands: ");
          xml_text(f, r->operands);
        }
        fprintf(f, "\nreproduce: ");
        xml_text(f, cmd);
        fprintf(f, "</failure>");
      } else {
        fprintf(f, "<skipped message=\"%s: ", cf_status_name(r->status));
        xml_text(f, r->message);
        fprintf(f, "\"/>");
      }
      fprintf(f, "</testcase>\n");
    }
    fprintf(f, "    <system-out>");
    xml_text(f, text);
    fprintf(f, "</system-out>\n  </testsuite>\n");
  }
  fprintf(f, "</testsuites>\n");
  return psup_atomic_commit(&af, NULL, 0) == 0 ? 0 : -1;
}
