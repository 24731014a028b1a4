/* Attribute lookup on nodes, and the element count of engine tensors. */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/shape_util.h"

const etrt_attribute *etrt_node_attribute(const etrt_node *node, const char *name) {
  for (uint32_t i = 0; i < node->num_attributes; ++i) {
    if (strcmp(node->attributes[i].name, name) == 0) return &node->attributes[i];
  }
  return NULL;
}

/* An attribute of the wrong kind reads as absent: prepare functions check kinds
 * where a wrong kind must be refused. */
int64_t etrt_node_attribute_int(const etrt_node *node, const char *name, int64_t fallback) {
  const etrt_attribute *a = etrt_node_attribute(node, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_INT ? a->i : fallback;
}

float etrt_node_attribute_float(const etrt_node *node, const char *name, float fallback) {
  const etrt_attribute *a = etrt_node_attribute(node, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_FLOAT ? a->f : fallback;
}

const char *etrt_node_attribute_string(const etrt_node *node, const char *name,
                                       const char *fallback) {
  const etrt_attribute *a = etrt_node_attribute(node, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_STRING ? a->s : fallback;
}

int64_t etrt_tensor_numel(const etrt_tensor *tensor) {
  return etrt_shape_numel(tensor->rank, tensor->dims);
}
