#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define ETRT_CONF_KEY_WORDS 10

/* The operator type of the last node label ("node 'name' (Op)" or "node 3 (Op)")
 * in `m`, and where the text after that label's ": " starts. */
static int etrt_conf_node_label(const char *m, char *op, size_t op_size, const char **rest) {
  int found = 0;
  for (const char *p = strstr(m, "node "); p != NULL; p = strstr(p + 1, "node ")) {
    const char *q = p + 5;
    if (*q == '\'') {
      q = strchr(q + 1, '\'');
      if (q == NULL) break;
      ++q;
    } else {
      while (isdigit((unsigned char)*q)) ++q;
      if (q == p + 5) continue;
    }
    if (q[0] != ' ' || q[1] != '(') continue;
    const char *close = strchr(q + 2, ')');
    if (close == NULL) continue;
    size_t n = (size_t)(close - (q + 2));
    if (n == 0 || n >= op_size) continue;
    memcpy(op, q + 2, n);
    op[n] = '\0';
    *rest = close[1] == ':' ? close + 2 : close + 1;
    found = 1;
  }
  return found;
}

/* Whether the quoted text after key[0..used) names a tensor, node or file (which
 * differs from case to case and is left out of the key) rather than an attribute,
 * a mode or a domain (which says what is missing and is kept). */
static int etrt_conf_names_a_value(const char *key, size_t used) {
  static const char *const naming[] = {"node",   "input",       "output", "tensor", "value",
                                       "method", "initializer", "file",   "graph",  "name"};
  while (used > 0 && key[used - 1] == ' ') --used;
  size_t start = used;
  while (start > 0 && key[start - 1] != ' ') --start;
  /* at the start of a clause, or after a type ("SequenceProto 'x'") */
  if (start == used || key[used - 1] == ':' || isupper((unsigned char)key[start])) return 1;
  for (size_t i = 0; i < sizeof naming / sizeof *naming; ++i)
    if (strlen(naming[i]) == used - start && memcmp(key + start, naming[i], used - start) == 0)
      return 1;
  return 0;
}

/* Appends `text` to key with the quoted names of values and parenthesized asides
 * left out, digit
 * runs as N and at most ETRT_CONF_KEY_WORDS words, stopping at the first clause
 * separator. */
static void etrt_conf_key_append(char *key, size_t size, const char *text) {
  size_t used = strlen(key);
  int words = 0, in_quote = 0, parens = 0;
  for (const char *p = text; *p != '\0' && used + 2 < size; ++p) {
    char c = *p;
    if (c == '\'' && parens == 0) {
      if (!in_quote) {
        in_quote = etrt_conf_names_a_value(key, used) ? 1 : 2;
        if (in_quote == 2) key[used++] = c;
      } else {
        if (in_quote == 2) key[used++] = c;
        in_quote = 0;
      }
      continue;
    }
    if (in_quote == 1) continue;
    if (c == '(' || c == ')') {
      parens += c == '(' ? 1 : parens > 0 ? -1 : 0;
      continue;
    }
    if (parens > 0) continue;
    if (c == ';' || c == '\n' || (c == ':' && (p[1] == ' ' || p[1] == '\0')) ||
        (c == ',' && words >= 3))
      break;
    if (c == ' ') {
      /* one space between words, none at the start */
      if (used > 0 && key[used - 1] != ' ') {
        if (++words == ETRT_CONF_KEY_WORDS) break;
        key[used++] = ' ';
      }
      continue;
    }
    if (isdigit((unsigned char)c)) {
      while (isdigit((unsigned char)p[1]) || p[1] == '.') ++p;
      c = 'N';
    }
    key[used++] = c;
  }
  while (used > 0 && (key[used - 1] == ' ' || key[used - 1] == ',')) --used;
  key[used] = '\0';
}

/* Words of a clause, quoted names counting as one. */
static int etrt_conf_words(const char *begin, const char *end) {
  int words = 0, in_word = 0, in_quote = 0;
  for (const char *p = begin; p < end; ++p) {
    if (*p == '\'') in_quote = !in_quote;
    if (*p == ' ' && !in_quote)
      in_word = 0;
    else if (!in_word) {
      in_word = 1;
      ++words;
    }
  }
  return words;
}

/* "BatchNormalization 'bn_0'": an operator type and a node name. */
static int etrt_conf_op_clause(const char *begin, const char *end, char *op, size_t op_size) {
  const char *space = memchr(begin, ' ', (size_t)(end - begin));
  if (!isupper((unsigned char)*begin) || space == NULL || space[1] != '\'' || end[-1] != '\'' ||
      end - space < 3 || memchr(space + 2, '\'', (size_t)(end - 1 - (space + 2))) != NULL)
    return 0;
  for (const char *p = begin; p < space; ++p)
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  if ((size_t)(space - begin) >= op_size) return 0;
  memcpy(op, begin, (size_t)(space - begin));
  op[space - begin] = '\0';
  return 1;
}

void etrt_conf_reason_key(const char *message, char *key, size_t size) {
  if (size == 0) return;
  key[0] = '\0';
  if (message == NULL || message[0] == '\0') {
    snprintf(key, size, "(no message)");
    return;
  }
  const char *missing = strstr(message, "has no operator ");
  if (missing != NULL) {
    missing += strlen("has no operator ");
    size_t n = strcspn(missing, " ,(");
    snprintf(key, size, "no operator %.*s", (int)n, missing);
    return;
  }
  char op[64] = "";
  const char *rest = message;
  etrt_conf_node_label(message, op, sizeof op, &rest);
  /* Leading clauses that say where, not what, are skipped: "partition 0 (cpu): ",
   * "'file.pb': ", "tensor 'x' at byte 0: ", "model: ", "Conv 'conv_1': " (whose
   * operator type is kept). */
  for (;;) {
    while (*rest == ' ') ++rest;
    const char *end = strstr(rest, ": ");
    if (end == NULL) break;
    char clause_op[64];
    if (etrt_conf_op_clause(rest, end, clause_op, sizeof clause_op)) {
      if (op[0] == '\0') snprintf(op, sizeof op, "%s", clause_op);
    } else if (etrt_conf_words(rest, end) >= 3 && strncmp(rest, "partition ", 10) != 0 &&
               strstr(rest, " at byte ") == NULL) {
      break;
    }
    rest = end + 2;
  }
  if (op[0] != '\0') snprintf(key, size, "%s: ", op);
  etrt_conf_key_append(key, size, rest);
}
