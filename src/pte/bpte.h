/* ExecuTorch bundled programs (.bpte, FlatBuffer "BundledProgram", identifier
 * "BP08"): a serialized program plus, per method, test cases of inputs and the
 * outputs eager execution produced for them.
 *
 * Reading is zero copy: names, tensor data and the embedded program are views into
 * the input buffer, which must stay alive while the file object is used. */
#ifndef ETRT_PTE_BPTE_H
#define ETRT_PTE_BPTE_H

#include "pte/pte.h"

#define BPTE_FILE_IDENTIFIER "BP08"
/* The schema's force_align of the embedded program and of tensor data. */
#define BPTE_PROGRAM_ALIGNMENT 32
#define BPTE_TENSOR_ALIGNMENT 16

/* ValueUnion's members, numbered as the schema's union tags. */
typedef enum etrt_bpte_value_kind {
  ETRT_BPTE_VALUE_TENSOR = 1,
  ETRT_BPTE_VALUE_INT = 2,
  ETRT_BPTE_VALUE_BOOL = 3,
  ETRT_BPTE_VALUE_DOUBLE = 4
} etrt_bpte_value_kind;

typedef struct etrt_bpte_tensor {
  etrt_dtype scalar_type; /* checked: a type etrt knows */
  etrt_pte_i32s sizes;    /* checked: at most ETRT_MAX_RANK, none negative */
  etrt_pte_u8s dim_order; /* checked: empty or 0, 1, ..., rank-1 (contiguous) */
  etrt_pte_bytes data;    /* checked: exactly the tensor's bytes, aligned to its type */
} etrt_bpte_tensor;

typedef struct etrt_bpte_value {
  etrt_bpte_value_kind kind;
  etrt_bpte_tensor tensor; /* kind TENSOR */
  int64_t int_val;         /* kind INT */
  bool bool_val;           /* kind BOOL */
  double double_val;       /* kind DOUBLE */
} etrt_bpte_value;

typedef struct etrt_bpte_case {
  const etrt_bpte_value *inputs;
  size_t inputs_count;
  const etrt_bpte_value *expected_outputs;
  size_t expected_outputs_count;
} etrt_bpte_case;

typedef struct etrt_bpte_suite {
  etrt_pte_str method_name; /* checked: present */
  const etrt_bpte_case *cases;
  size_t cases_count;
} etrt_bpte_suite;

typedef struct etrt_bpte_file {
  uint32_t version;
  const etrt_bpte_suite *suites;
  size_t suites_count;
  etrt_pte_bytes program; /* checked: present and non-empty */
  etrt_arena *arena_;     /* private */
} etrt_bpte_file;

/* Verifies the whole FlatBuffer and decodes it; the embedded program itself is
 * verified when it is loaded. Refuses with ETRT_ERROR_INVALID_FORMAT and a message
 * naming the field and byte offset. */
etrt_status etrt_bpte_parse(const uint8_t *data, size_t size, etrt_bpte_file **out);
void etrt_bpte_file_free(etrt_bpte_file *file);

/* Writes `file` (arena_ unused) as ExecuTorch's serializer lays it out: program
 * 32-byte and tensor data 16-byte aligned. Deterministic; `*out` is malloc'd. */
etrt_status etrt_bpte_write(const etrt_bpte_file *file, uint8_t **out, size_t *out_size);

#endif
