/* Programs: a loaded .pte file. Immutable after load and safe to share between
 * threads; each thread that runs a method creates its own etrt_method. */
#ifndef ETRT_PROGRAM_H
#define ETRT_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etrt_program etrt_program;

typedef struct etrt_program_options {
  /* A .ptd data file holding external tensors (named data), or NULL. */
  const char *data_path;
  /* Run plans built for a GPU on the CPU when no GPU is present (their device
   * buffers become host memory). Off by default: without a GPU, loading a method
   * that needs one fails and says so. */
  int allow_cpu_fallback;
  /* Run every plan on the CPU executor even where a GPU is present (a reference
   * for checking GPU results). */
  int force_cpu;
  /* The most threads a CPU operator of this program's methods may use, the
   * executing thread included: 0 (the default) means every core the process may run
   * on. Methods of every program share one pool of worker threads, started here at
   * load, so methods executing at once do not multiply the threads. */
  int threads;
} etrt_program_options;

/* Loads and verifies a program from a file (mapped, read in place). Every method's
 * operators and delegates are checked: an operator etrt does not have, or a delegate
 * id no backend is registered under, is refused here with its name. */
etrt_status etrt_program_load_file(const char *path, const etrt_program_options *options,
                                   etrt_program **out);
/* The same from memory; `data` must outlive the program (it is not copied). */
etrt_status etrt_program_load_memory(const void *data, size_t size,
                                     const etrt_program_options *options, etrt_program **out);
void etrt_program_destroy(etrt_program *program);

uint32_t etrt_program_method_count(const etrt_program *program);
const char *etrt_program_method_name(const etrt_program *program, uint32_t index);

/* One input or output of a method, as the program declares it. */
typedef struct etrt_tensor_info {
  etrt_dtype dtype;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK]; /* the declared (largest) sizes */
  int dynamic;                  /* sizes may shrink within the bounds at run time */
  etrt_device device;           /* where the program plans this tensor to live */
  int is_tensor;                /* 0 for a non-tensor value (int, bool, ...) */
  /* The dims in memory order, outermost first (ExecuTorch's dim_order): the bytes of
   * an input handed to etrt_method_set_input, and of an output, are laid out in this
   * order; 0, 2, 3, 1 is channels-last. */
  uint8_t dim_order[ETRT_MAX_RANK];
} etrt_tensor_info;

etrt_status etrt_program_method_io(const etrt_program *program, const char *method,
                                   uint32_t *num_inputs, uint32_t *num_outputs);
etrt_status etrt_program_input_info(const etrt_program *program, const char *method, uint32_t index,
                                    etrt_tensor_info *out);
etrt_status etrt_program_output_info(const etrt_program *program, const char *method,
                                     uint32_t index, etrt_tensor_info *out);

#ifdef __cplusplus
}
#endif
#endif
