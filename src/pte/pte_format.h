/* Constants of the .pte layout shared by the reader and the writer: field slots of
 * the schema tables (their order in schema/program.fbs), the extended header and
 * ExecuTorch's alignment defaults. */
#ifndef ETRT_PTE_PTE_FORMAT_H
#define ETRT_PTE_PTE_FORMAT_H

#define PTE_FILE_IDENTIFIER "ET12"

/* "eh00" header right after the identifier: magic, u32 length, u64 program_size,
 * u64 segment_base_offset, then (length >= 32) u64 segment_data_size. */
#define PTE_HEADER_MAGIC "eh00"
#define PTE_HEADER_OFFSET 8
#define PTE_HEADER_MIN_LENGTH 24
#define PTE_HEADER_LENGTH 32

/* ExecuTorch's serializer defaults: segments start at multiples of 128 bytes,
 * constant tensors sit at multiples of 16 in the constant segment, and inline
 * constant / delegate bytes carry force_align 16. */
#define PTE_SEGMENT_ALIGNMENT 128
#define PTE_TENSOR_ALIGNMENT 16
#define PTE_INLINE_ALIGNMENT 16
/* The largest segment alignment the reader infers from offsets (a page). */
#define PTE_MAX_KEPT_ALIGNMENT 4096

/* .ptd files: identifier "FT01", then the "FH01" header at byte 8: magic, u32
 * length, u64 flatbuffer_offset, flatbuffer_size, segment_base_offset,
 * segment_data_size; padded to 48 bytes by the serializer. Segments and tensors
 * are 16-byte aligned by default. */
#define PTD_FILE_IDENTIFIER "FT01"
#define PTD_HEADER_MAGIC "FH01"
#define PTD_HEADER_LENGTH 40
#define PTD_HEADER_PADDED 48
#define PTD_SEGMENT_ALIGNMENT 16

enum {
  PTE_PROGRAM_VERSION = 0,
  PTE_PROGRAM_EXECUTION_PLAN = 1,
  PTE_PROGRAM_CONSTANT_BUFFER = 2,
  PTE_PROGRAM_BACKEND_DELEGATE_DATA = 3,
  PTE_PROGRAM_SEGMENTS = 4,
  PTE_PROGRAM_CONSTANT_SEGMENT = 5,
  PTE_PROGRAM_MUTABLE_DATA_SEGMENTS = 6,
  PTE_PROGRAM_NAMED_DATA = 7
};

enum {
  PTE_PLAN_NAME = 0,
  PTE_PLAN_CONTAINER_META_TYPE = 1,
  PTE_PLAN_VALUES = 2,
  PTE_PLAN_INPUTS = 3,
  PTE_PLAN_OUTPUTS = 4,
  PTE_PLAN_CHAINS = 5,
  PTE_PLAN_OPERATORS = 6,
  PTE_PLAN_DELEGATES = 7,
  PTE_PLAN_NON_CONST_BUFFER_SIZES = 8,
  PTE_PLAN_NON_CONST_BUFFER_DEVICE = 9
};

enum {
  PTE_TENSOR_SCALAR_TYPE = 0,
  PTE_TENSOR_STORAGE_OFFSET = 1,
  PTE_TENSOR_SIZES = 2,
  PTE_TENSOR_DIM_ORDER = 3,
  PTE_TENSOR_REQUIRES_GRAD = 4,
  PTE_TENSOR_DATA_BUFFER_IDX = 5,
  PTE_TENSOR_ALLOCATION_INFO = 6,
  PTE_TENSOR_LAYOUT = 7,
  PTE_TENSOR_SHAPE_DYNAMISM = 8,
  PTE_TENSOR_EXTRA_TENSOR_INFO = 9
};

#endif
