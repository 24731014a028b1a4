/* The shared grammar of the build flags that name a graph input and give it one or
 * two fields, "NAME:F1" or "NAME:F1:F2" (--shape, --shape-values). Names may
 * contain ':' themselves (TensorFlow exports name inputs "x:0"), so the fields are
 * taken from the right and the name is whatever the graph knows; each flag brings
 * its own field syntax. */
#ifndef ETRT_BUILDER_FLAG_TEXT_H
#define ETRT_BUILDER_FLAG_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builder/ir.h"

/* Most values one field may hold, across the flags (a field parser never writes
 * more than its own limit, which must not exceed this). */
#define ETRT_FLAG_TEXT_MAX_VALUES 64

/* A number as text, for a limit spelled in a constant message. */
#define ETRT_FLAG_TEXT_NUMBER(x) ETRT_FLAG_TEXT_NUMBER_(x)
#define ETRT_FLAG_TEXT_NUMBER_(x) #x

/* One text split into a name and one or two fields (views into the text). */
typedef struct etrt_flag_text {
  const char *name;
  size_t name_size;
  const char *fields[2];
  size_t field_sizes[2];
  int field_count;
} etrt_flag_text;

/* What one flag's fields look like. */
typedef struct etrt_flag_format {
  const char *flag;   /* "--shape", for messages */
  const char *syntax; /* what a well-formed text looks like, for messages */
  bool (*field_ok)(const char *text, size_t size);
  /* Parses a field that field_ok accepted; returns the count, or -1 when the
   * values do not fit (too many, or one too large). */
  int (*field_parse)(const char *text, size_t size, int64_t *values);
  const char *parse_failure; /* why field_parse returns -1, for messages */
} etrt_flag_format;

/* Splits `spec` at its last `fields` colons (1 or 2); false when a field is
 * malformed for `format` or the name is empty. */
bool etrt_flag_text_split(const char *spec, int fields, const etrt_flag_format *format,
                          etrt_flag_text *out);

/* Checks the syntax of one text without a graph: it splits with one field, and
 * every split it has parses. */
etrt_status etrt_flag_text_check(const char *spec, const etrt_flag_format *format);

/* The value id of the graph input named by `text`, or -1. */
int32_t etrt_flag_text_find_input(const etrt_ir_graph *graph, const etrt_flag_text *text);

#endif
