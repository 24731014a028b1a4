/* The ONNX reader: a ModelProto read from bytes into read-only structs.
 *
 * For the importer, in short:
 *
 *   etrt_onnx_model *model;
 *   ETRT_RETURN_IF_ERROR(etrt_onnx_model_load_file("model.onnx", &model));
 *   const etrt_onnx_graph *g = etrt_onnx_model_graph(model);
 *   int64_t opset = etrt_onnx_model_opset(model, "");          // default domain, -1 if absent
 *   for (size_t i = 0; i < g->initializer_count; ++i) {
 *     etrt_onnx_host_tensor w;
 *     ETRT_RETURN_IF_ERROR(etrt_onnx_tensor_to_host(&g->initializers[i], &w));
 *     ... w.dtype, w.rank, w.dims, w.data, w.nbytes ...
 *     etrt_onnx_host_tensor_release(&w);
 *   }
 *   for (size_t i = 0; i < g->node_count; ++i) {
 *     const etrt_onnx_node *n = &g->nodes[i];
 *     if (etrt_onnx_str_eq(n->op_type, "Conv")) {
 *       const int64_t *pads; size_t npads;
 *       ETRT_RETURN_IF_ERROR(etrt_onnx_node_attr_ints(n, "pads", &pads, &npads));  // NOT_FOUND if
 * absent int64_t group = 1; ETRT_RETURN_IF_ERROR(etrt_onnx_node_attr_int(n, "group", 1, &group));
 * // default when absent
 *     }
 *   }
 *   etrt_onnx_model_free(model);
 *
 * Ownership and lifetime: everything reachable from a model (graphs, nodes, names,
 * tensors' bytes) lives until etrt_onnx_model_free. Strings and raw_data are views
 * into the model's bytes (not NUL-terminated: compare with etrt_onnx_str_eq, print
 * with "%.*s", ETRT_ONNX_STR_ARGS(s)); repeated fields are arrays in one arena that
 * the model owns (NULL when the count is 0); external data files are mapped read-only
 * and stay mapped. Weights are never copied while parsing: the arena holds names,
 * dims, attributes and typed-field values only. Tensors (TensorProto, element types,
 * host conversion) are declared in onnx_tensor.h. A parsed model is immutable and may
 * be read from several threads.
 *
 * What parsing checks (so that the importer need not): every length and offset, wire
 * types of known fields, field values' ranges, nesting depth; every tensor's dims
 * (non-negative, product without overflow) against its data (count or bytes) for the
 * element types etrt knows; external data paths (relative, inside the model's folder,
 * offset + length within the file). Unknown fields are skipped, as protobuf requires.
 * Refused as unsupported: TensorProto.segment, GraphProto.sparse_initializer,
 * external data when no folder is known. Kept for the importer to refuse: element
 * types etrt cannot hold (STRING, COMPLEX*, FLOAT8*, ...: etrt_onnx_dtype_to_etrt
 * names them), non-tensor value types (sequence, map, optional), attributes of
 * types SPARSE_TENSOR / TYPE_PROTO(S), model-local functions (etrt_onnx_model_function).
 * Subgraph attributes (If, Loop, Scan) are parsed (`g` / `graphs` are set) up to
 * ETRT_ONNX_MAX_GRAPH_DEPTH (onnx_parse.h) levels below the main graph; deeper nesting is
 * refused naming the field and byte offset.
 *
 * Not interpreted (the importer's job): which graph inputs are initializers (in IR
 * version < 4 every initializer is also listed as an input), whether names are
 * unique, whether the graph is topologically sorted, node semantics.
 *
 * Errors name the field path and the byte offset:
 *   "ModelProto.graph.node[3].attribute[1].t.dims: varint truncated at byte 1234". */
#ifndef ETRT_BUILDER_ONNX_MODEL_H
#define ETRT_BUILDER_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "builder/onnx_tensor.h"
#include "etrt/status.h"
#include "etrt/types.h"

typedef enum etrt_onnx_type_kind {
  ETRT_ONNX_TYPE_NONE = 0, /* no TypeProto, or one without a value */
  ETRT_ONNX_TYPE_TENSOR = 1,
  ETRT_ONNX_TYPE_SEQUENCE = 4,
  ETRT_ONNX_TYPE_MAP = 5,
  ETRT_ONNX_TYPE_SPARSE_TENSOR = 8,
  ETRT_ONNX_TYPE_OPTIONAL = 9
} etrt_onnx_type_kind;

typedef struct etrt_onnx_dim {
  int has_value;       /* dim_value given */
  int64_t value;       /* dim_value (may be negative as written; the importer decides) */
  etrt_onnx_str param; /* dim_param, size 0 when none; neither set: an unknown dim */
} etrt_onnx_dim;

typedef struct etrt_onnx_value_info {
  etrt_onnx_str name;
  etrt_onnx_type_kind kind;
  int32_t elem_type; /* TENSOR and SPARSE_TENSOR: the element type; SEQUENCE and
                        OPTIONAL: that of the tensor they hold (elem_tensor) */
  /* SEQUENCE and OPTIONAL: the kind of value held (NONE when not written); elem_tensor
   * when that is a tensor, or a sequence of tensors, described by elem_type, has_shape,
   * rank and dims. */
  etrt_onnx_type_kind elem_kind;
  int elem_tensor;
  int has_shape; /* 0: rank unknown */
  size_t rank;
  const etrt_onnx_dim *dims;
  size_t offset;
} etrt_onnx_value_info;

/* AttributeProto.AttributeType, numbered as ONNX numbers it. */
typedef enum etrt_onnx_attr_type {
  ETRT_ONNX_ATTR_UNDEFINED = 0,
  ETRT_ONNX_ATTR_FLOAT = 1,
  ETRT_ONNX_ATTR_INT = 2,
  ETRT_ONNX_ATTR_STRING = 3,
  ETRT_ONNX_ATTR_TENSOR = 4,
  ETRT_ONNX_ATTR_GRAPH = 5,
  ETRT_ONNX_ATTR_FLOATS = 6,
  ETRT_ONNX_ATTR_INTS = 7,
  ETRT_ONNX_ATTR_STRINGS = 8,
  ETRT_ONNX_ATTR_TENSORS = 9,
  ETRT_ONNX_ATTR_GRAPHS = 10,
  ETRT_ONNX_ATTR_SPARSE_TENSOR = 11,
  ETRT_ONNX_ATTR_SPARSE_TENSORS = 12,
  ETRT_ONNX_ATTR_TYPE_PROTO = 13,
  ETRT_ONNX_ATTR_TYPE_PROTOS = 14
} etrt_onnx_attr_type;

/* "FLOAT", "INTS", ...; "type N" for unknown numbers. */
const char *etrt_onnx_attr_type_name(int32_t type);

typedef struct etrt_onnx_graph etrt_onnx_graph;

typedef struct etrt_onnx_attribute {
  etrt_onnx_str name;
  int32_t type; /* etrt_onnx_attr_type; inferred from the value when the file omits it */
  etrt_onnx_str ref_attr_name; /* set only inside functions */
  float f;
  int64_t i;
  etrt_onnx_str s;
  const etrt_onnx_tensor *t; /* NULL unless given */
  const etrt_onnx_graph *g;  /* NULL unless given */
  const float *floats;
  size_t float_count;
  const int64_t *ints;
  size_t int_count;
  const etrt_onnx_str *strings;
  size_t string_count;
  const etrt_onnx_tensor *tensors;
  size_t tensor_count;
  const etrt_onnx_graph *graphs;
  size_t graph_count;
  size_t offset;
} etrt_onnx_attribute;

typedef struct etrt_onnx_node {
  etrt_onnx_str name;
  etrt_onnx_str op_type;
  etrt_onnx_str domain;        /* "" and "ai.onnx" are the default domain */
  const etrt_onnx_str *inputs; /* an empty name is an omitted optional input */
  size_t input_count;
  const etrt_onnx_str *outputs;
  size_t output_count;
  const etrt_onnx_attribute *attributes;
  size_t attribute_count;
  size_t offset;
} etrt_onnx_node;

struct etrt_onnx_graph {
  etrt_onnx_str name;
  const etrt_onnx_node *nodes;
  size_t node_count;
  const etrt_onnx_tensor *initializers;
  size_t initializer_count;
  const etrt_onnx_value_info *inputs;
  size_t input_count;
  const etrt_onnx_value_info *outputs;
  size_t output_count;
  const etrt_onnx_value_info *value_infos;
  size_t value_info_count;
  const uint8_t *bytes; /* the serialized GraphProto (a view), e.g. for a digest */
  size_t size;
  size_t offset;
};

typedef struct etrt_onnx_opset {
  etrt_onnx_str domain;
  int64_t version;
} etrt_onnx_opset;

typedef struct etrt_onnx_model etrt_onnx_model;

/* Parses a ModelProto held in `data`, which must outlive the model (the model keeps
 * views into it). External data files are looked up in `base_dir`; NULL refuses any
 * external data. A model without a graph is refused. */
etrt_status etrt_onnx_model_parse(const uint8_t *data, size_t size, const char *base_dir,
                                  etrt_onnx_model **out);
/* Maps the file and parses it; external data is looked up next to it. */
etrt_status etrt_onnx_model_load_file(const char *path, etrt_onnx_model **out);
void etrt_onnx_model_free(etrt_onnx_model *model);

const etrt_onnx_graph *etrt_onnx_model_graph(const etrt_onnx_model *model);
int64_t etrt_onnx_model_ir_version(const etrt_onnx_model *model);
etrt_onnx_str etrt_onnx_model_producer_name(const etrt_onnx_model *model);
etrt_onnx_str etrt_onnx_model_producer_version(const etrt_onnx_model *model);
size_t etrt_onnx_model_opset_count(const etrt_onnx_model *model);
const etrt_onnx_opset *etrt_onnx_model_opsets(const etrt_onnx_model *model);
/* The opset version imported for `domain` ("" and "ai.onnx" are the same); -1 if
 * the model imports none. */
int64_t etrt_onnx_model_opset(const etrt_onnx_model *model, const char *domain);
/* Model-local functions (FunctionProto): a node whose (domain, op_type) matches one
 * calls it. Only names are kept: etrt does not expand functions. */
size_t etrt_onnx_model_function_count(const etrt_onnx_model *model);
void etrt_onnx_model_function(const etrt_onnx_model *model, size_t index, etrt_onnx_str *domain,
                              etrt_onnx_str *name);

/* Parses a standalone serialized TensorProto (a .pb test data file). The tensor lives
 * in *holder (free with etrt_onnx_model_free); `data` must outlive it. External data
 * is refused. `what` names the source in messages (a file name). */
etrt_status etrt_onnx_tensor_parse(const uint8_t *data, size_t size, const char *what,
                                   etrt_onnx_model **holder, const etrt_onnx_tensor **tensor);

/* --- attributes, for the importer ---------------------------------------------------- */

/* The node's attribute called `name`, or NULL. */
const etrt_onnx_attribute *etrt_onnx_node_attr(const etrt_onnx_node *node, const char *name);

/* Typed reads. When the attribute is absent: the *_int / *_float / *_string forms
 * write the default and succeed; the others return ETRT_ERROR_NOT_FOUND. A present
 * attribute of another type is ETRT_ERROR_INVALID_FORMAT. Messages name the node
 * ("node 'conv1' (Conv): attribute 'pads' is FLOATS, expected INTS"). */
etrt_status etrt_onnx_node_attr_int(const etrt_onnx_node *node, const char *name, int64_t fallback,
                                    int64_t *out);
etrt_status etrt_onnx_node_attr_float(const etrt_onnx_node *node, const char *name, float fallback,
                                      float *out);
etrt_status etrt_onnx_node_attr_string(const etrt_onnx_node *node, const char *name,
                                       const char *fallback, etrt_onnx_str *out);
etrt_status etrt_onnx_node_attr_ints(const etrt_onnx_node *node, const char *name,
                                     const int64_t **values, size_t *count);
etrt_status etrt_onnx_node_attr_floats(const etrt_onnx_node *node, const char *name,
                                       const float **values, size_t *count);
etrt_status etrt_onnx_node_attr_tensor(const etrt_onnx_node *node, const char *name,
                                       const etrt_onnx_tensor **out);

#endif
