/* Every operation the engine knows. Each family file defines a NULL-terminated list
 * etrt_ops_<family>; add a family here once. */
#include <string.h>

#include "engine/op.h"

extern const etrt_op_def *const etrt_ops_elementwise[];
extern const etrt_op_def *const etrt_ops_matmul[];

static const etrt_op_def *const *const etrt_op_families[] = {
    etrt_ops_elementwise,
    etrt_ops_matmul,
};

#define ETRT_OP_FAMILY_COUNT (sizeof etrt_op_families / sizeof etrt_op_families[0])
#define ETRT_OP_CAPACITY 512

static const etrt_op_def *etrt_op_table[ETRT_OP_CAPACITY];
static size_t etrt_op_table_count;

static void etrt_op_table_fill(void) {
  for (size_t f = 0; f < ETRT_OP_FAMILY_COUNT; ++f) {
    for (const etrt_op_def *const *d = etrt_op_families[f]; *d != NULL; ++d) {
      if (etrt_op_table_count < ETRT_OP_CAPACITY) etrt_op_table[etrt_op_table_count++] = *d;
    }
  }
}

#include <pthread.h>
static pthread_once_t etrt_op_table_once = PTHREAD_ONCE_INIT;

const etrt_op_def *const *etrt_op_all(size_t *count) {
  pthread_once(&etrt_op_table_once, etrt_op_table_fill);
  *count = etrt_op_table_count;
  return etrt_op_table;
}

const etrt_op_def *etrt_op_find(const char *op_type) {
  size_t count;
  const etrt_op_def *const *all = etrt_op_all(&count);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(all[i]->op_type, op_type) == 0) return all[i];
  }
  return NULL;
}
