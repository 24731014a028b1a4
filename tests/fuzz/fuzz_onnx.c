/* The ONNX reader on arbitrary bytes: parsing from memory (no folder, so external data
 * is refused), then everything the importer would touch: every tensor converted to
 * host memory, typed attribute reads, subgraphs. */
#include <stddef.h>
#include <stdint.h>

#include "builder/onnx_model.h"

static void fuzz_tensor(const etrt_onnx_tensor *t) {
  etrt_onnx_host_tensor h;
  if (etrt_onnx_tensor_to_host(t, &h) != ETRT_OK) return;
  /* Touch every byte so that a wrong size shows up under the address sanitizer. */
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < h.nbytes; ++i) sink ^= ((const uint8_t *)h.data)[i];
  (void)sink;
  etrt_onnx_host_tensor_release(&h);
}

static void fuzz_graph(const etrt_onnx_graph *g) {
  for (size_t i = 0; i < g->initializer_count; ++i) fuzz_tensor(&g->initializers[i]);
  for (size_t i = 0; i < g->input_count; ++i) {
    const etrt_onnx_value_info *vi = &g->inputs[i];
    for (size_t d = 0; d < vi->rank; ++d) (void)vi->dims[d].param.data[0];
  }
  for (size_t i = 0; i < g->node_count; ++i) {
    const etrt_onnx_node *n = &g->nodes[i];
    int64_t v;
    float f;
    etrt_onnx_str s;
    const int64_t *ints;
    size_t count;
    const etrt_onnx_tensor *t;
    (void)etrt_onnx_node_attr_int(n, "axis", 0, &v);
    (void)etrt_onnx_node_attr_float(n, "alpha", 1.0f, &f);
    (void)etrt_onnx_node_attr_string(n, "mode", "constant", &s);
    if (etrt_onnx_node_attr_ints(n, "pads", &ints, &count) == ETRT_OK) {
      for (size_t k = 0; k < count; ++k) v ^= ints[k];
    }
    (void)etrt_onnx_node_attr_tensor(n, "value", &t);
    for (size_t a = 0; a < n->attribute_count; ++a) {
      const etrt_onnx_attribute *attr = &n->attributes[a];
      if (attr->t != NULL) fuzz_tensor(attr->t);
      for (size_t k = 0; k < attr->tensor_count; ++k) fuzz_tensor(&attr->tensors[k]);
      if (attr->g != NULL) fuzz_graph(attr->g);
      for (size_t k = 0; k < attr->graph_count; ++k) fuzz_graph(&attr->graphs[k]);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  etrt_onnx_model *m;
  if (etrt_onnx_model_parse(data, size, NULL, &m) != ETRT_OK) return 0;
  (void)etrt_onnx_model_opset(m, "");
  fuzz_graph(etrt_onnx_model_graph(m));
  etrt_onnx_model_free(m);
  return 0;
}
