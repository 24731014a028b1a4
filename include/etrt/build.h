/* Building ExecuTorch programs (.pte) from ONNX models: import, graph passes,
 * partitioning between the engine on the GPU and the CPU, one engine plan per
 * partition, and the program with device-aware memory planning.
 *
 *   etrt_build_options options;
 *   etrt_build_options_init(&options);
 *   options.device = "cuda:0";
 *   const char *shapes[] = {"batch:1:32"};
 *   options.shapes = shapes; options.num_shapes = 1;
 *   if (etrt_build_onnx_file("model.onnx", &options, "model.pte") != ETRT_OK)
 *     fprintf(stderr, "%s\n", etrt_last_error());
 */
#ifndef ETRT_BUILD_H
#define ETRT_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/network.h"
#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Puts the ONNX node called `node` (its NodeProto name) on `device` ("cpu" or
 * "cuda:N") whatever the partitioner would choose: how one program spreads its
 * partitions over several GPUs. */
typedef struct etrt_build_placement {
  const char *node;
  const char *device;
} etrt_build_placement;

/* One line of progress ("partition 0 cuda:0: 12 ops (Conv x5, Relu x4, ...)"),
 * without a trailing newline. */
typedef void (*etrt_build_progress_fn)(const char *line, void *user);

typedef struct etrt_build_options {
  /* "cpu" or "cuda:N": where the engine partitions run. NULL: cuda:0 when a GPU
   * (or a simulated one, ETRT_DEVICE=sim:N) is present, else cpu. */
  const char *device;
  /* The target_device compile spec of every GPU partition, used verbatim. NULL:
   * each partition's is derived from its engine's real device ("cuda:N"), cuda:0
   * where that cannot be read. CPU partitions always say "cpu". */
  const char *target_device;
  /* Bounds of dynamic dimensions, as the command line's --shape takes them:
   *   SYMBOL:MIN:MAX      every input axis named SYMBOL in the model, MIN..MAX
   *   SYMBOL:N            the same, fixed at N
   *   INPUT:DIMS          input INPUT fixed at DIMS ("1x3x224x224")
   *   INPUT:MINDIMS:MAXDIMS  input INPUT between two shapes ("1x128:8x512")
   * A name is looked up among the graph inputs first, then the symbols; a bound
   * given for an input wins over one given for its symbol. */
  const char *const *shapes;
  uint32_t num_shapes;
  /* The types GPU plans compute in: with FP16 or BF16 their float32 weights and
   * activations are stored in that type, cast at the plans' float32 inputs and
   * outputs (README "Precision"); CPU plans keep float32. */
  etrt_precision precision;
  /* Method inputs and outputs stay on the device: the caller passes device
   * memory, no copies are planned, and their tensors carry the device. */
  int io_on_device;
  const etrt_build_placement *placements;
  uint32_t num_placements;
  /* Constant folding leaves nodes whose outputs would exceed this many bytes;
   * 0 means the default (64 MiB). */
  size_t fold_limit_bytes;
  /* A GPU partition built for a device that is present has its cuDNN convolutions
   * timed there and the choices recorded in its plan (docs/gpu-performance.md); 1 skips
   * that (as does ETRT_CONV_TUNE=0): contexts then time them when created. */
  int no_tune;
  /* Where progress lines go; NULL: nowhere. */
  etrt_build_progress_fn progress;
  void *progress_user;
  /* Values of graph inputs that decide shapes (a Reshape's shape, Slice's starts,
   * TopK's k... given as inputs, not initializers), as --shape-values takes them:
   *   INPUT:V1,V2,...                 the values the program will be run with
   *   INPUT:MIN1,MIN2,...:MAX1,MAX2,...  bounds of each value
   * (signed integers; "INPUT:" for none). Only int32 and int64 inputs of rank 0 or 1
   * with at most 64 values. The input stays an input of the program, passed on the
   * host, and a value outside what was given is refused at run time. Output bounds
   * are inferred at both ends of each range, so ranges suit values that sizes grow
   * with (a Reshape's shape); give exact values otherwise. A model whose plans need
   * such an input's values is refused until they are given, naming the flag. */
  const char *const *shape_values;
  uint32_t num_shape_values;
  /* Sequence and optional graph inputs, as --sequence takes them:
   *   INPUT:N     sequence (or optional sequence) INPUT holds N tensors
   *   INPUT:none  optional INPUT holds no value
   * A sequence is unrolled when the program is built: each of its tensors is a method
   * input "INPUT[i]" (bounded with --shape "INPUT[i]:DIMS" where the model leaves its
   * sizes open) and a sequence output is one method output "OUTPUT[i]" per tensor. An
   * optional tensor is present unless given as none. What a sequence's length depends
   * on (a position, a split, a Loop's trip count and condition, an If's condition) must
   * be known then too: a constant, or a graph input given one exact value in
   * shape_values ("INPUT:V"), for which the program is built; unlike other shape values
   * such an input is not read again, so another value at run time is not refused. */
  const char *const *sequences;
  uint32_t num_sequences;
} etrt_build_options;

/* Zeroes the options: default device, derived target_device, fp32, host I/O. */
void etrt_build_options_init(etrt_build_options *options);

/* Builds the ONNX model in `onnx_path` (external data next to it) and writes the
 * program to `pte_path` atomically: on failure no file (or the old one) is there.
 * Bad models and bad options fail with ETRT_ERROR_INVALID_FORMAT,
 * ETRT_ERROR_INVALID_ARGUMENT or ETRT_ERROR_UNSUPPORTED (and NOT_FOUND for a missing
 * file), other failures with the status of the step that failed. */
etrt_status etrt_build_onnx_file(const char *onnx_path, const etrt_build_options *options,
                                 const char *pte_path);

/* Builds from a serialized ModelProto in memory (no external data) into malloc'd
 * bytes (free with free()). */
etrt_status etrt_build_onnx_memory(const void *onnx, size_t onnx_size,
                                   const etrt_build_options *options, uint8_t **pte,
                                   size_t *pte_size);

#ifdef __cplusplus
}
#endif
#endif
