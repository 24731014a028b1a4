/* The plan: a serialized engine. Everything is little-endian; offsets are in bytes
 * from the start of the plan. Version 1:
 *
 * Header (ETRT_PLAN_HEADER_SIZE = 192 bytes)
 *   0    8  magic "ETRTPLAN"
 *   8    4  u32 format version (1)
 *   12   4  u32 header size (192)
 *   16   4  u32 device type (0 cpu, 1 cuda: etrt_device_type)
 *   20   4  i32 device index (0 for cpu, 0..1023 for cuda)
 *   24   4  u32 compute capability major (cuda; 0 for cpu)
 *   28   4  u32 compute capability minor
 *   32   4  u32 precision (etrt_precision)
 *   36   4  u32 flags: bit 0 (ETRT_PLAN_FLAG_TUNED) a tuning record follows the nodes
 *   40   8  u64 body size: plan size - header size
 *   48  32  SHA-256 of the body (every byte after the header)
 *   80 112  engine name, NUL-terminated, zero-padded (at most 111 bytes)
 *
 * Body (from offset 192). A string is a u32 length then that many bytes, no NUL
 * inside, at most ETRT_PLAN_MAX_STRING. dims are i64.
 *   u32 io count, u32 value count, u32 node count, u32 reserved (0)
 *   u64 weights offset: absolute, a multiple of 64, the end of the metadata below
 *       rounded up to 64 (zero padding between)
 *   u64 weights size: the weights region runs to the end of the plan
 *   values[value count]:
 *     string name; u8 kind (etrt_value_kind); u8 flags (bit 0: shape input);
 *     u16 reserved (0); i32 dtype (etrt_dtype); i32 rank (0..8);
 *     dims min[rank]; dims max[rank] (0 <= min <= max <= 2^40)
 *     constants: u64 data offset (from the weights offset, a multiple of 64, not
 *       before the end of the previous constant's bytes); u64 size (numel * dtype size)
 *     shape inputs (int64, rank 1, fixed length n): i64 min values[n]; i64 max values[n]
 *   I/O table[io count] (inputs first, then outputs; each entry restates its value):
 *     u32 value id; u8 is input; u8 is shape input; u16 reserved (0); string name;
 *     i32 dtype; i32 rank; dims min[rank]; dims max[rank]
 *   nodes[node count], in execution order:
 *     string op type (ONNX name); string node name;
 *     u32 input count; i32 value ids (-1: an omitted optional input);
 *     u32 output count; i32 value ids; u32 attribute count; attributes:
 *       string name; u32 kind (etrt_attribute_kind); then by kind:
 *       INT i64 | FLOAT f32 | STRING string | INTS u32 n, i64[n] | FLOATS u32 n, f32[n] |
 *       TENSOR i32 dtype, i32 rank, dims[rank], u64 size, bytes[size] |
 *       GRAPH (control flow bodies) as TENSOR, uint8 of rank 1: the bytes of a nested plan,
 *         verified when the node is prepared (subgraphs nest at most
 *         ETRT_CONTROL_MAX_DEPTH deep, engine/ops/control.h)
 *   tuning record, when the header flag ETRT_PLAN_FLAG_TUNED is set, from the first
 *     multiple of 64 after the nodes (zero padding before it): the convolution
 *     algorithms timed on the GPU the plan was built for (etrt_plan_tuning):
 *     string GPU name (1..ETRT_PLAN_TUNING_NAME_MAX bytes); u32 compute capability
 *     major (1..99); u32 minor (0..99); u32 cuDNN version (cudnnGetVersion, > 0);
 *     u32 choice count (at most the node count); choices[count], node indices
 *     strictly increasing: u32 node index; u32 algorithm (cudnnConvolutionFwdAlgo_t,
 *     0..7); u32 math type (cudnnMathType_t, 0..3); u32 reserved (0); u64 scratch
 *     bytes (at most 2^40). A plan without the flag has no record and loads as before.
 *   zero padding to the weights offset
 *   weights: each constant's bytes at its offset, zero padding between
 *
 * Weights are 64-byte aligned in the plan, so that a plan buffer aligned to 64 bytes
 * (a mapped file, an aligned allocation) has its weights used in place. */
#ifndef ETRT_ENGINE_PLAN_FORMAT_H
#define ETRT_ENGINE_PLAN_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/plan_choice.h"
#include "etrt/network.h"
#include "etrt/types.h"

#define ETRT_PLAN_MAGIC "ETRTPLAN"
#define ETRT_PLAN_VERSION 1u
#define ETRT_PLAN_HEADER_SIZE 192u
#define ETRT_PLAN_NAME_OFFSET 80u
#define ETRT_PLAN_NAME_SIZE 112u
#define ETRT_PLAN_BODY_HEADER_SIZE 32u
#define ETRT_PLAN_WEIGHT_ALIGNMENT 64u
#define ETRT_PLAN_MAX_STRING 65535u
#define ETRT_PLAN_MAX_DEVICE_INDEX 1023
#define ETRT_PLAN_VALUE_SHAPE_INPUT 1u
#define ETRT_PLAN_FLAG_TUNED 1u
#define ETRT_PLAN_TUNING_NAME_MAX 255u
#define ETRT_PLAN_TUNING_MAX_ALGORITHM 7u
#define ETRT_PLAN_TUNING_MAX_MATH 3u
#define ETRT_PLAN_TUNING_MAX_SCRATCH ((uint64_t)1 << 40)

static inline void etrt_plan_store_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void etrt_plan_store_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t etrt_plan_load_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static inline uint64_t etrt_plan_load_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* What the choices were timed on; a context uses them only on the same GPU name,
 * compute capability and cuDNN major version. count 0 with present 0: no record. */
typedef struct etrt_plan_tuning {
  int present;
  char gpu[ETRT_PLAN_TUNING_NAME_MAX + 1];
  int compute_major, compute_minor;
  uint32_t cudnn_version;
  uint32_t count;
  const etrt_plan_conv_choice *choices; /* arena-owned (the graph's) when read */
} etrt_plan_tuning;

/* What the header says besides sizes. */
typedef struct etrt_plan_info {
  etrt_device device;
  int compute_major, compute_minor;
  etrt_precision precision;
  char name[ETRT_PLAN_NAME_SIZE];
  const uint8_t *weights; /* the host bytes of the weights region (in place or copied) */
  uint64_t weights_size;
  etrt_plan_tuning tuning; /* the tuning record, when the plan has one */
} etrt_plan_info;

/* Verifies a plan and reads it into `graph` (initialised by the caller, released by
 * the caller on failure too): values, I/O, nodes with their op definitions resolved
 * (def set, state not prepared), constants' data pointing into the plan when the
 * weights are 64-byte aligned there, else into one copy in the graph's arena.
 * *node_offsets (malloc'd, one per node) gives each node's byte offset for later
 * messages. Every refusal names the field and its byte offset. */
etrt_status etrt_plan_parse(const void *plan, size_t size, etrt_plan_info *info, etrt_graph *graph,
                            size_t **node_offsets);

/* Returns a copy of `plan` (a verified plan without a record) carrying `tuning`
 * (malloc'd in *out, free()d by the caller): the record is spliced in before the
 * weights, which move by a multiple of 64 so their relative offsets stay valid. */
etrt_status etrt_plan_tuning_attach(const uint8_t *plan, size_t size,
                                    const etrt_plan_tuning *tuning, uint8_t **out,
                                    size_t *out_size);

#endif
