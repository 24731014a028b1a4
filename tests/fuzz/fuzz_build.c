/* The whole builder on arbitrary bytes: a model that parses goes through import,
 * shape inference, the passes (constant folding runs kernels on the model's own
 * constants), partitioning, plan building and .pte emission. Symbolic sizes are
 * bounded by the --shape texts a user would pass for the common symbol names. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "etrt/build.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  etrt_build_options options;
  etrt_build_options_init(&options);
  options.device = "cpu";
  /* Folding is capped low so that a hostile ConstantOfShape costs little. */
  options.fold_limit_bytes = 1 << 20;
  uint8_t *pte = NULL;
  size_t pte_size = 0;
  if (etrt_build_onnx_memory(data, size, &options, &pte, &pte_size) == ETRT_OK) free(pte);
  return 0;
}
