/* Runtime values: the value table of a method instance (ExecuTorch's EValue). */
#ifndef ETRT_RUNTIME_VALUE_H
#define ETRT_RUNTIME_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/types.h"

typedef enum etrt_value_tag {
  ETRT_VALUE_NONE = 0,
  ETRT_VALUE_INT,
  ETRT_VALUE_BOOL,
  ETRT_VALUE_DOUBLE,
  ETRT_VALUE_TENSOR,
  ETRT_VALUE_STRING,
  ETRT_VALUE_INT_LIST,
  ETRT_VALUE_DOUBLE_LIST,
  ETRT_VALUE_BOOL_LIST,
  ETRT_VALUE_TENSOR_LIST,
  ETRT_VALUE_OPTIONAL_TENSOR_LIST
} etrt_value_tag;

typedef struct etrt_runtime_tensor {
  void *data;
  size_t capacity; /* bytes available at data */
  etrt_dtype dtype;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  int64_t max_sizes[ETRT_MAX_RANK]; /* the declared sizes: the bound for dynamic tensors */
  int dynamic;                      /* DYNAMIC_BOUND / UNBOUND: sizes may change within capacity */
  int permuted;                     /* dim_order is not the contiguous one (channels-last) */
  uint8_t dim_order[ETRT_MAX_RANK]; /* the dims in memory order, outermost first */
  int constant;       /* read-only bytes fixed at load (kernels may prepare from them) */
  etrt_device device; /* where the program planned it (extra_tensor_info) */
} etrt_runtime_tensor;

typedef struct etrt_value {
  etrt_value_tag tag;
  union {
    int64_t i;
    int b;
    double d;
    etrt_runtime_tensor tensor;
    struct {
      const char *data;
      size_t size;
    } string;
    struct {
      const int64_t *items; /* value indices of Int values (ExecuTorch list semantics) */
      uint32_t count;
    } int_list;
    struct {
      const int32_t *items; /* value indices; -1 for an absent optional tensor */
      uint32_t count;
    } tensor_list;
    struct {
      const double *items;
      uint32_t count;
    } doubles;
    struct {
      const uint8_t *items;
      uint32_t count;
    } bools;
  } u;
} etrt_value;

/* Bytes the tensor's current sizes need; SIZE_MAX on overflow. */
size_t etrt_runtime_tensor_nbytes(const etrt_runtime_tensor *tensor);

#endif
