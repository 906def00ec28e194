/* json.c — the small JSON reader (json.h) and the string writer parity-bench uses. */
#include "json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *s, *p;
  char *err;
  size_t errlen;
  int depth;
} parser;

static json *fail(parser *ps, const char *what) {
  if (ps->err && !ps->err[0])
    snprintf(ps->err, ps->errlen, "bad JSON at offset %ld: expected %s", (long)(ps->p - ps->s), what);
  return NULL;
}

static void ws(parser *ps) {
  while (*ps->p && isspace((unsigned char)*ps->p)) ps->p++;
}

static json *node(json_type t) {
  json *j = calloc(1, sizeof *j);
  if (j) j->type = t;
  return j;
}

static char *parse_string_raw(parser *ps) {
  if (*ps->p != '"') return (char *)fail(ps, "a string");
  ps->p++;
  size_t cap = 16, n = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  for (;;) {
    char c = *ps->p++;
    if (!c || (unsigned char)c < 0x20) {
      free(out);
      ps->p--;
      return (char *)fail(ps, "a closing quote");
    }
    if (c == '"') break;
    if (c == '\\') {
      char e = *ps->p++;
      switch (e) {
        case '"':
        case '\\':
        case '/': c = e; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
          unsigned v = 0;
          for (int k = 0; k < 4; k++) {
            char h = *ps->p++;
            if (!isxdigit((unsigned char)h)) {
              free(out);
              return (char *)fail(ps, "four hex digits after \\u");
            }
            v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
          }
          c = v < 0x80 ? (char)v : '?';
          break;
        }
        default: free(out); return (char *)fail(ps, "a valid escape");
      }
    }
    if (n + 2 > cap) {
      char *m = realloc(out, cap *= 2);
      if (!m) {
        free(out);
        return NULL;
      }
      out = m;
    }
    out[n++] = c;
  }
  out[n] = 0;
  return out;
}

static json *parse_value(parser *ps);

static json *parse_container(parser *ps, int object) {
  json *j = node(object ? JSON_OBJECT : JSON_ARRAY), **tail = &j->child;
  char close = object ? '}' : ']';
  ps->p++;
  ws(ps);
  if (*ps->p == close) {
    ps->p++;
    return j;
  }
  for (;;) {
    char *key = NULL;
    ws(ps);
    if (object) {
      if (!(key = parse_string_raw(ps))) goto bad;
      ws(ps);
      if (*ps->p != ':') {
        free(key);
        fail(ps, "':'");
        goto bad;
      }
      ps->p++;
    }
    json *v = parse_value(ps);
    if (!v) {
      free(key);
      goto bad;
    }
    v->key = key;
    *tail = v;
    tail = &v->next;
    ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      return j;
    }
    fail(ps, object ? "',' or '}'" : "',' or ']'");
    goto bad;
  }
bad:
  json_free(j);
  return NULL;
}

static json *parse_value(parser *ps) {
  ws(ps);
  if (++ps->depth > 64) return fail(ps, "less nesting (at most 64 levels)");
  json *j = NULL;
  const char *p = ps->p;
  if (*p == '{' || *p == '[')
    j = parse_container(ps, *p == '{');
  else if (*p == '"') {
    char *s = parse_string_raw(ps);
    if (s && (j = node(JSON_STRING)))
      j->string = s;
    else
      free(s);
  } else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
    j = node(JSON_BOOL);
    j->number = *p == 't';
    ps->p += *p == 't' ? 4 : 5;
  } else if (!strncmp(p, "null", 4)) {
    j = node(JSON_NULL);
    ps->p += 4;
  } else if (*p == '-' || isdigit((unsigned char)*p)) {
    char *end;
    double v = strtod(p, &end);
    if (end == p) return fail(ps, "a number");
    j = node(JSON_NUMBER);
    j->number = v;
    ps->p = end;
  } else {
    return fail(ps, "a value");
  }
  ps->depth--;
  return j;
}

json *json_parse(const char *text, char *err, size_t errlen) {
  parser ps = {text, text, err, errlen, 0};
  if (err && errlen) err[0] = 0;
  json *j = parse_value(&ps);
  if (!j) return NULL;
  ws(&ps);
  if (*ps.p) {
    json_free(j);
    return fail(&ps, "the end of the text");
  }
  return j;
}

json *json_parse_file(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot read '%s'", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0, got;
  char *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 >= cap) {
      char *m = realloc(buf, cap *= 2);
      if (!m) free(buf);
      buf = m;
    }
  }
  fclose(f);
  if (!buf) {
    snprintf(err, errlen, "out of memory reading '%s'", path);
    return NULL;
  }
  buf[n] = 0;
  char inner[200];
  json *j = json_parse(buf, inner, sizeof inner);
  free(buf);
  if (!j) snprintf(err, errlen, "'%s' is not a parity-bench JSON file: %s", path, inner);
  return j;
}

void json_free(json *j) {
  while (j) {
    json *next = j->next;
    json_free(j->child);
    free(j->string);
    free(j->key);
    free(j);
    j = next;
  }
}

const json *json_get(const json *j, const char *key) {
  if (!j || j->type != JSON_OBJECT) return NULL;
  for (const json *c = j->child; c; c = c->next)
    if (c->key && !strcmp(c->key, key)) return c;
  return NULL;
}

const char *json_str(const json *j, const char *key, const char *fallback) {
  const json *v = json_get(j, key);
  return v && v->type == JSON_STRING ? v->string : fallback;
}

double json_num(const json *j, const char *key, double fallback) {
  const json *v = json_get(j, key);
  return v && v->type == JSON_NUMBER ? v->number : fallback;
}

void json_write_string(void *file, const char *s) {
  FILE *f = file;
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}
