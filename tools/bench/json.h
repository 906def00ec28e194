/* json.h — a small JSON reader for parity-bench: its own result files (--compare baselines) and
 * the output of torch_ref.py. The whole text is parsed into a tree of nodes; strings are
 * unescaped (\uXXXX below 0x80 only; others become '?'). */
#ifndef PARITY_BENCH_JSON_H
#define PARITY_BENCH_JSON_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json {
  json_type type;
  double number;             /* JSON_NUMBER, JSON_BOOL (0 or 1) */
  char *string;              /* JSON_STRING */
  char *key;                 /* member name when inside an object */
  struct json *child, *next; /* first element / member; next sibling */
} json;

/* Parse text; NULL with a message in err (position and what was expected) on bad input. */
json *json_parse(const char *text, char *err, size_t errlen);
/* Read and parse a whole file; NULL with a message (cannot read / bad JSON at ...). */
json *json_parse_file(const char *path, char *err, size_t errlen);
void json_free(json *j);
/* Member `key` of an object (NULL when absent or j is not an object). */
const json *json_get(const json *j, const char *key);
/* The member's string / number, or fallback when absent or of another type. */
const char *json_str(const json *j, const char *key, const char *fallback);
double json_num(const json *j, const char *key, double fallback);
/* Write s as a JSON string literal (quotes and escapes). */
void json_write_string(void *file, const char *s);

#endif
