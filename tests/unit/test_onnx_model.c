/* The ONNX reader on models encoded here, field by field, with the protobuf writer:
 * what it reads, and every refusal. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "builder/onnx_model.h"
#include "builder/protobuf.h"
#include "builder/tensor_pb.h"
#include "test_util.h"

/* --- a tiny encoder for ModelProto and friends ------------------------------------------- */

typedef etrt_pb_writer W;

static W msg(void) {
  W w;
  etrt_pb_writer_init(&w);
  return w;
}

/* Writes `sub` as field `number` of `w` and frees it. */
static void put(W *w, uint32_t number, W *sub) {
  etrt_pb_write_message_field(w, number, sub);
  etrt_pb_writer_release(sub);
}

static void put_val(W *w, uint32_t number, W sub) { put(w, number, &sub); }

static uint8_t *finish(W *w, size_t *size) {
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_pb_writer_finish(w, &bytes, size));
  return bytes;
}

static void put_dims(W *t, const int64_t *dims, size_t rank) {
  for (size_t i = 0; i < rank; ++i) etrt_pb_write_varint_field(t, 1, (uint64_t)dims[i]);
}

static W tensor_raw(const char *name, int32_t type, const int64_t *dims, size_t rank,
                    const void *raw, size_t size) {
  W t = msg();
  put_dims(&t, dims, rank);
  etrt_pb_write_varint_field(&t, 2, (uint64_t)type);
  etrt_pb_write_string_field(&t, 8, name);
  etrt_pb_write_bytes_field(&t, 9, raw, size);
  return t;
}

/* A typed-field tensor: values are varints (packed) for fields 5, 7, 11. */
static W tensor_varints(const char *name, int32_t type, const int64_t *dims, size_t rank,
                        uint32_t field, const int64_t *values, size_t count) {
  W t = msg(), packed = msg();
  put_dims(&t, dims, rank);
  etrt_pb_write_varint_field(&t, 2, (uint64_t)type);
  etrt_pb_write_string_field(&t, 8, name);
  for (size_t i = 0; i < count; ++i) etrt_pb_write_varint(&packed, (uint64_t)values[i]);
  put(&t, field, &packed);
  return t;
}

static W value_info(const char *name, int32_t elem_type, const char *const *dims, size_t rank) {
  W vi = msg(), type = msg(), tensor = msg(), shape = msg();
  etrt_pb_write_string_field(&vi, 1, name);
  etrt_pb_write_varint_field(&tensor, 1, (uint64_t)elem_type);
  for (size_t i = 0; i < rank; ++i) {
    W dim = msg();
    if (dims[i][0] >= '0' && dims[i][0] <= '9') {
      etrt_pb_write_varint_field(&dim, 1, (uint64_t)atoll(dims[i]));
    } else if (dims[i][0] != '?') {
      etrt_pb_write_string_field(&dim, 2, dims[i]);
    }
    put(&shape, 1, &dim);
  }
  put(&tensor, 2, &shape);
  put(&type, 1, &tensor);
  put(&vi, 2, &type);
  return vi;
}

static W attr_int(const char *name, int64_t v) {
  W a = msg();
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_INT);
  etrt_pb_write_varint_field(&a, 3, (uint64_t)v);
  return a;
}

static W node(const char *op, const char *name, const char *in0, const char *in1, const char *out) {
  W n = msg();
  if (in0) etrt_pb_write_string_field(&n, 1, in0);
  if (in1) etrt_pb_write_string_field(&n, 1, in1);
  etrt_pb_write_string_field(&n, 2, out);
  etrt_pb_write_string_field(&n, 3, name);
  etrt_pb_write_string_field(&n, 4, op);
  return n;
}

static uint8_t *model_bytes(W *graph, size_t *size) {
  W m = msg(), opset = msg();
  etrt_pb_write_varint_field(&m, 1, 8);
  etrt_pb_write_string_field(&m, 2, "etrt-test");
  etrt_pb_write_string_field(&opset, 1, "");
  etrt_pb_write_varint_field(&opset, 2, 13);
  put(&m, 8, &opset);
  put(&m, 7, graph);
  return finish(&m, size);
}

/* A graph whose only content is one initializer. */
static uint8_t *model_with_initializer(W *tensor, size_t *size) {
  W g = msg();
  etrt_pb_write_string_field(&g, 2, "g");
  put(&g, 5, tensor);
  return model_bytes(&g, size);
}

static etrt_status parse_bytes(uint8_t *bytes, size_t size) {
  etrt_onnx_model *m = NULL;
  etrt_status s = etrt_onnx_model_parse(bytes, size, NULL, &m);
  if (s == ETRT_OK) CHECK(m != NULL);
  if (s != ETRT_OK) CHECK(m == NULL);
  etrt_onnx_model_free(m);
  free(bytes);
  return s;
}

/* --- reading ------------------------------------------------------------------------------- */

/* The conv of a small model: every attribute kind, a subgraph, inputs with symbolic dims. */
static uint8_t *rich_model(size_t *size) {
  W g = msg();
  etrt_pb_write_string_field(&g, 2, "main");
  static const float w[6] = {1, 2, 3, 4, 5, 6};
  put_val(&g, 5, tensor_raw("w", ETRT_ONNX_FLOAT, (const int64_t[]){2, 3}, 2, w, sizeof w));
  W n = node("Conv", "conv1", "x", "w", "y");
  etrt_pb_write_string_field(&n, 1, ""); /* an omitted optional input */
  etrt_pb_write_string_field(&n, 7, "ai.onnx");
  W a = attr_int("group", 2);
  put(&n, 5, &a);
  W ints = msg(), packed = msg();
  etrt_pb_write_string_field(&ints, 1, "pads");
  etrt_pb_write_varint_field(&ints, 20, ETRT_ONNX_ATTR_INTS);
  etrt_pb_write_varint(&packed, 1);
  etrt_pb_write_varint(&packed, (uint64_t)(int64_t)-1);
  put(&ints, 8, &packed);
  etrt_pb_write_varint_field(&ints, 8, 7); /* unpacked, after the packed ones */
  put(&n, 5, &ints);
  W fl = msg();
  etrt_pb_write_string_field(&fl, 1, "alpha");      /* no type: inferred from f */
  etrt_pb_write_fixed32_field(&fl, 2, 0x3e800000u); /* 0.25 */
  put(&n, 5, &fl);
  W floats = msg(), pf = msg();
  etrt_pb_write_string_field(&floats, 1, "scales");
  etrt_pb_write_varint_field(&floats, 20, ETRT_ONNX_ATTR_FLOATS);
  static const float sc[2] = {0.5f, 2.0f};
  etrt_pb_write_raw(&pf, sc, sizeof sc);
  put(&floats, 7, &pf);
  put(&n, 5, &floats);
  W s = msg();
  etrt_pb_write_string_field(&s, 1, "auto_pad");
  etrt_pb_write_varint_field(&s, 20, ETRT_ONNX_ATTR_STRING);
  etrt_pb_write_string_field(&s, 4, "NOTSET");
  put(&n, 5, &s);
  W strs = msg();
  etrt_pb_write_string_field(&strs, 1, "names");
  etrt_pb_write_varint_field(&strs, 20, ETRT_ONNX_ATTR_STRINGS);
  etrt_pb_write_string_field(&strs, 9, "a");
  etrt_pb_write_string_field(&strs, 9, "bc");
  put(&n, 5, &strs);
  W t = msg();
  etrt_pb_write_string_field(&t, 1, "value");
  etrt_pb_write_varint_field(&t, 20, ETRT_ONNX_ATTR_TENSOR);
  static const int64_t iv[3] = {5, -6, 7};
  put_val(&t, 5, tensor_varints("c", ETRT_ONNX_INT64, (const int64_t[]){3}, 1, 7, iv, 3));
  put(&n, 5, &t);
  W sub = msg(), ga = msg();
  etrt_pb_write_string_field(&sub, 2, "then");
  put_val(&sub, 1, node("Identity", "id", "x", NULL, "z"));
  etrt_pb_write_string_field(&ga, 1, "then_branch");
  etrt_pb_write_varint_field(&ga, 20, ETRT_ONNX_ATTR_GRAPH);
  put(&ga, 6, &sub);
  put(&n, 5, &ga);
  etrt_pb_write_varint_field(&n, 99, 1); /* unknown field: skipped */
  put(&g, 1, &n);
  put_val(&g, 11, value_info("x", ETRT_ONNX_FLOAT, (const char *const[]){"N", "3", "?"}, 3));
  put_val(&g, 12, value_info("y", ETRT_ONNX_FLOAT, NULL, 0));
  put_val(&g, 13, value_info("z", ETRT_ONNX_INT64, (const char *const[]){"4"}, 1));
  W fn = msg();
  etrt_pb_write_string_field(&fn, 1, "MyFunc");
  etrt_pb_write_string_field(&fn, 10, "custom");
  W m = msg(), opset = msg(), opset2 = msg();
  etrt_pb_write_varint_field(&m, 1, 8);
  etrt_pb_write_string_field(&m, 2, "etrt-test");
  etrt_pb_write_string_field(&m, 3, "1.0");
  etrt_pb_write_varint_field(&opset, 2, 13);
  put(&m, 8, &opset);
  etrt_pb_write_string_field(&opset2, 1, "custom");
  etrt_pb_write_varint_field(&opset2, 2, 1);
  put(&m, 8, &opset2);
  etrt_pb_write_string_field(&m, 6, "doc"); /* ignored */
  put(&m, 7, &g);
  put(&m, 25, &fn);
  return finish(&m, size);
}

static void test_model_fields(void) {
  size_t size;
  uint8_t *bytes = rich_model(&size);
  etrt_onnx_model *m;
  CHECK_OK(etrt_onnx_model_parse(bytes, size, NULL, &m));
  if (m == NULL) return;
  CHECK_EQ_INT(etrt_onnx_model_ir_version(m), 8);
  CHECK(etrt_onnx_str_eq(etrt_onnx_model_producer_name(m), "etrt-test"));
  CHECK(etrt_onnx_str_eq(etrt_onnx_model_producer_version(m), "1.0"));
  CHECK_EQ_INT(etrt_onnx_model_opset_count(m), 2);
  CHECK_EQ_INT(etrt_onnx_model_opset(m, ""), 13);
  CHECK_EQ_INT(etrt_onnx_model_opset(m, "ai.onnx"), 13);
  CHECK_EQ_INT(etrt_onnx_model_opset(m, "custom"), 1);
  CHECK_EQ_INT(etrt_onnx_model_opset(m, "com.microsoft"), -1);
  CHECK_EQ_INT(etrt_onnx_model_function_count(m), 1);
  etrt_onnx_str fd, fname;
  etrt_onnx_model_function(m, 0, &fd, &fname);
  CHECK(etrt_onnx_str_eq(fd, "custom") && etrt_onnx_str_eq(fname, "MyFunc"));

  const etrt_onnx_graph *g = etrt_onnx_model_graph(m);
  CHECK(etrt_onnx_str_eq(g->name, "main"));
  CHECK_EQ_INT(g->initializer_count, 1);
  CHECK_EQ_INT(g->node_count, 1);
  CHECK_EQ_INT(g->input_count, 1);
  CHECK_EQ_INT(g->output_count, 1);
  CHECK_EQ_INT(g->value_info_count, 1);

  const etrt_onnx_tensor *w = &g->initializers[0];
  CHECK(etrt_onnx_str_eq(w->name, "w"));
  CHECK_EQ_INT(w->data_type, ETRT_ONNX_FLOAT);
  CHECK_EQ_INT(w->rank, 2);
  CHECK_EQ_INT(w->dims[1], 3);
  CHECK_EQ_INT(w->numel, 6);
  CHECK_EQ_INT(w->storage, ETRT_ONNX_STORAGE_RAW);
  /* Zero copy: raw_data points into the model's bytes. */
  CHECK(w->raw_data >= bytes && w->raw_data + w->raw_size <= bytes + size);
  etrt_onnx_host_tensor h;
  CHECK_OK(etrt_onnx_tensor_to_host(w, &h));
  CHECK_EQ_INT(h.dtype, ETRT_DTYPE_FLOAT32);
  CHECK_EQ_INT(h.nbytes, 24);
  CHECK_NEAR(((const float *)h.data)[5], 6.0, 0);
  etrt_onnx_host_tensor_release(&h);

  const etrt_onnx_node *n = &g->nodes[0];
  CHECK(etrt_onnx_str_eq(n->op_type, "Conv") && etrt_onnx_str_eq(n->name, "conv1"));
  CHECK(etrt_onnx_str_eq(n->domain, "ai.onnx"));
  CHECK_EQ_INT(n->input_count, 3);
  CHECK(etrt_onnx_str_eq(n->inputs[1], "w") && n->inputs[2].size == 0);
  CHECK_EQ_INT(n->output_count, 1);
  CHECK_EQ_INT(n->attribute_count, 8);
  int64_t group = 0, missing = 0;
  CHECK_OK(etrt_onnx_node_attr_int(n, "group", 1, &group));
  CHECK_EQ_INT(group, 2);
  CHECK_OK(etrt_onnx_node_attr_int(n, "strides_default", 9, &missing));
  CHECK_EQ_INT(missing, 9);
  const int64_t *pads;
  size_t npads;
  CHECK_OK(etrt_onnx_node_attr_ints(n, "pads", &pads, &npads));
  CHECK_EQ_INT(npads, 3);
  if (npads == 3) {
    CHECK_EQ_INT(pads[0], 1);
    CHECK_EQ_INT(pads[1], -1);
    CHECK_EQ_INT(pads[2], 7);
  }
  float alpha = 0;
  CHECK_OK(etrt_onnx_node_attr_float(n, "alpha", 1.0f, &alpha));
  CHECK_NEAR(alpha, 0.25, 0);
  const float *scales;
  size_t nscales;
  CHECK_OK(etrt_onnx_node_attr_floats(n, "scales", &scales, &nscales));
  CHECK_EQ_INT(nscales, 2);
  CHECK_NEAR(scales[1], 2.0, 0);
  etrt_onnx_str pad;
  CHECK_OK(etrt_onnx_node_attr_string(n, "auto_pad", "x", &pad));
  CHECK(etrt_onnx_str_eq(pad, "NOTSET"));
  CHECK_OK(etrt_onnx_node_attr_string(n, "mode", "constant", &pad));
  CHECK(etrt_onnx_str_eq(pad, "constant"));
  const etrt_onnx_attribute *names = etrt_onnx_node_attr(n, "names");
  CHECK(names != NULL && names->string_count == 2 && etrt_onnx_str_eq(names->strings[1], "bc"));
  const etrt_onnx_tensor *c;
  CHECK_OK(etrt_onnx_node_attr_tensor(n, "value", &c));
  CHECK_OK(etrt_onnx_tensor_to_host(c, &h));
  CHECK_EQ_INT(h.dtype, ETRT_DTYPE_INT64);
  CHECK_EQ_INT(((const int64_t *)h.data)[1], -6);
  etrt_onnx_host_tensor_release(&h);
  const etrt_onnx_attribute *branch = etrt_onnx_node_attr(n, "then_branch");
  CHECK(branch != NULL && branch->type == ETRT_ONNX_ATTR_GRAPH && branch->g != NULL);
  if (branch != NULL && branch->g != NULL) {
    CHECK(etrt_onnx_str_eq(branch->g->name, "then"));
    CHECK_EQ_INT(branch->g->node_count, 1);
    CHECK(etrt_onnx_str_eq(branch->g->nodes[0].op_type, "Identity"));
  }
  /* Typed reads refuse a type mismatch and name the node. */
  CHECK_FAILS(etrt_onnx_node_attr_ints(n, "group", &pads, &npads), ETRT_ERROR_INVALID_FORMAT,
              "node 'conv1' (Conv): attribute 'group' is INT, expected INTS");
  CHECK_FAILS(etrt_onnx_node_attr_ints(n, "kernel_shape", &pads, &npads), ETRT_ERROR_NOT_FOUND,
              "attribute 'kernel_shape' is missing");
  CHECK_FAILS(etrt_onnx_node_attr_tensor(n, "nothing", &c), ETRT_ERROR_NOT_FOUND, "missing");

  const etrt_onnx_value_info *x = &g->inputs[0];
  CHECK(etrt_onnx_str_eq(x->name, "x"));
  CHECK_EQ_INT(x->kind, ETRT_ONNX_TYPE_TENSOR);
  CHECK_EQ_INT(x->elem_type, ETRT_ONNX_FLOAT);
  CHECK(x->has_shape && x->rank == 3);
  CHECK(!x->dims[0].has_value && etrt_onnx_str_eq(x->dims[0].param, "N"));
  CHECK(x->dims[1].has_value && x->dims[1].value == 3);
  CHECK(!x->dims[2].has_value && x->dims[2].param.size == 0);
  CHECK(g->outputs[0].has_shape && g->outputs[0].rank == 0);
  CHECK_EQ_INT(g->value_infos[0].elem_type, ETRT_ONNX_INT64);
  etrt_onnx_model_free(m);
  free(bytes);
}

/* Every prefix of a valid model is refused cleanly (or, at a field boundary, read). */
static void test_truncation(void) {
  size_t size;
  uint8_t *bytes = rich_model(&size);
  int refused = 0;
  for (size_t cut = 0; cut < size; ++cut) {
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, bytes, cut);
    etrt_onnx_model *m = NULL;
    etrt_status s = etrt_onnx_model_parse(copy, cut, NULL, &m);
    if (s != ETRT_OK) {
      ++refused;
      CHECK(etrt_last_error()[0] != '\0');
      CHECK(strstr(etrt_last_error(), "ModelProto") != NULL);
    }
    etrt_onnx_model_free(m);
    free(copy);
  }
  /* The graph is the model's last-but-one field: the one proper prefix that reads is
   * the one that ends with it. */
  CHECK_EQ_INT(refused, (long long)size - 1);
  etrt_onnx_model *m;
  CHECK_FAILS(etrt_onnx_model_parse(bytes, size - 3, NULL, &m), ETRT_ERROR_INVALID_FORMAT,
              "exceeds");
  free(bytes);
}

static void test_structure_refusals(void) {
  size_t size;
  etrt_onnx_model *m;
  CHECK_FAILS(etrt_onnx_model_parse((const uint8_t *)"", 0, NULL, &m), ETRT_ERROR_INVALID_FORMAT,
              "the model has no graph");
  /* ir_version written as a length-delimited field. */
  W bad = msg();
  etrt_pb_write_bytes_field(&bad, 1, "x", 1);
  uint8_t *bytes = finish(&bad, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT,
              "ModelProto.ir_version: field 1 has wire type length-delimited, expected varint at "
              "byte 0");
  /* A deprecated group inside a node. */
  W g = msg(), n = msg();
  etrt_pb_write_string_field(&n, 4, "Relu");
  etrt_pb_write_tag(&n, 9, ETRT_PB_WIRE_GROUP_START);
  put_val(&g, 1, node("Relu", "r0", "x", NULL, "y"));
  put(&g, 1, &n);
  bytes = model_bytes(&g, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT,
              "ModelProto.graph.node[1]: field 9 uses the deprecated group wire type 3");
  /* The graph twice. */
  W g1 = msg(), g2 = msg(), m2 = msg();
  put(&m2, 7, &g1);
  put(&m2, 7, &g2);
  bytes = finish(&m2, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT, "graph given twice");
  /* Sparse initializers. */
  W gs = msg(), sparse = msg();
  put(&gs, 15, &sparse);
  bytes = model_bytes(&gs, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_UNSUPPORTED,
              "ModelProto.graph.sparse_initializer: sparse initializers are not supported");
  /* A node's input that is not length-delimited. */
  W gi = msg(), ni = msg();
  etrt_pb_write_varint_field(&ni, 1, 3);
  put(&gi, 1, &ni);
  bytes = model_bytes(&gi, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT,
              "ModelProto.graph.node[0].input: field 1 has wire type varint");
  /* An attribute's int that does not fit an int32 type field. */
  W ga = msg(), na = node("Relu", "r", "x", NULL, "y"), a = msg();
  etrt_pb_write_varint_field(&a, 20, 1ull << 40);
  put(&na, 5, &a);
  put(&ga, 1, &na);
  bytes = model_bytes(&ga, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT,
              "ModelProto.graph.node[0].attribute[0].type: field 20: value 1099511627776 out of "
              "range for int32");
}

/* Subgraphs nested past the limit are refused, not recursed into (long before the
 * protobuf depth limit). */
static void test_nesting_limit(void) {
  W inner = msg();
  etrt_pb_write_string_field(&inner, 2, "leaf");
  for (int level = 0; level < 30; ++level) {
    W a = msg(), n = node("If", "if", "c", NULL, "y"), g = msg();
    etrt_pb_write_string_field(&a, 1, "then_branch");
    etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_GRAPH);
    put(&a, 6, &inner);
    put(&n, 5, &a);
    put(&g, 1, &n);
    inner = g;
  }
  size_t size;
  uint8_t *bytes = model_bytes(&inner, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_UNSUPPORTED,
              "subgraphs nest deeper than 8 levels at byte");
  CHECK_STR_CONTAINS(etrt_last_error(), "ModelProto.graph.node[0].attribute[0].g.node[0]");
}

/* --- tensors ------------------------------------------------------------------------------ */

static etrt_status host_of(W *tensor, etrt_onnx_host_tensor *h, uint8_t *copy_out,
                           size_t copy_size) {
  size_t size;
  uint8_t *bytes = model_with_initializer(tensor, &size);
  etrt_onnx_model *m;
  etrt_status s = etrt_onnx_model_parse(bytes, size, NULL, &m);
  if (s == ETRT_OK) {
    s = etrt_onnx_tensor_to_host(&etrt_onnx_model_graph(m)->initializers[0], h);
    if (s == ETRT_OK) {
      if (copy_out != NULL && h->nbytes <= copy_size) memcpy(copy_out, h->data, h->nbytes);
      /* Keep the description for the caller; the bytes were copied out. */
      etrt_onnx_host_tensor kept = *h;
      etrt_onnx_host_tensor_release(h);
      *h = kept;
      h->data = NULL;
      h->owned_ = NULL;
    }
    etrt_onnx_model_free(m);
  }
  free(bytes);
  return s;
}

static void test_typed_fields(void) {
  etrt_onnx_host_tensor h;
  uint8_t out[64];
  static const int64_t d3[1] = {3};
  /* int8 / uint8 / bool / int16 / uint16 / float16 / bfloat16 in int32_data. */
  W t = tensor_varints("a", ETRT_ONNX_INT8, d3, 1, 5, (const int64_t[]){-128, 0, 127}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  CHECK_EQ_INT(h.dtype, ETRT_DTYPE_INT8);
  CHECK_EQ_INT(h.nbytes, 3);
  CHECK_EQ_INT((int8_t)out[0], -128);
  CHECK_EQ_INT((int8_t)out[2], 127);
  t = tensor_varints("b", ETRT_ONNX_BOOL, d3, 1, 5, (const int64_t[]){1, 0, 1}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  CHECK(h.dtype == ETRT_DTYPE_BOOL && out[0] == 1 && out[1] == 0 && out[2] == 1);
  t = tensor_varints("h", ETRT_ONNX_FLOAT16, d3, 1, 5, (const int64_t[]){0x3c00, 0xc000, 0x7bff},
                     3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  uint16_t halves[3];
  memcpy(halves, out, sizeof halves);
  CHECK(h.dtype == ETRT_DTYPE_FLOAT16 && halves[0] == 0x3c00 && halves[1] == 0xc000);
  t = tensor_varints("bf", ETRT_ONNX_BFLOAT16, d3, 1, 5, (const int64_t[]){0x3f80, 0, 0xffff}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  memcpy(halves, out, sizeof halves);
  CHECK(h.dtype == ETRT_DTYPE_BFLOAT16 && halves[0] == 0x3f80 && halves[2] == 0xffff);
  t = tensor_varints("u16", ETRT_ONNX_UINT16, d3, 1, 5, (const int64_t[]){0, 65535, 7}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  memcpy(halves, out, sizeof halves);
  CHECK(h.dtype == ETRT_DTYPE_UINT16 && halves[1] == 65535);
  t = tensor_varints("i32", ETRT_ONNX_INT32, d3, 1, 5, (const int64_t[]){-5, INT32_MAX, INT32_MIN},
                     3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  int32_t i32[3];
  memcpy(i32, out, sizeof i32);
  CHECK(h.dtype == ETRT_DTYPE_INT32 && i32[0] == -5 && i32[2] == INT32_MIN);
  /* uint32 and uint64 in uint64_data. */
  t = tensor_varints("u32", ETRT_ONNX_UINT32, d3, 1, 11, (const int64_t[]){0, 4294967295LL, 9}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  uint32_t u32[3];
  memcpy(u32, out, sizeof u32);
  CHECK(h.dtype == ETRT_DTYPE_UINT32 && u32[1] == 4294967295u);
  t = tensor_varints("u64", ETRT_ONNX_UINT64, d3, 1, 11, (const int64_t[]){-1, 0, 1}, 3);
  CHECK_OK(host_of(&t, &h, out, sizeof out));
  uint64_t u64[3];
  memcpy(u64, out, sizeof u64);
  CHECK(h.dtype == ETRT_DTYPE_UINT64 && u64[0] == UINT64_MAX);
  /* float_data and double_data, packed fixed-width. */
  W f = msg(), pf = msg();
  put_dims(&f, (const int64_t[]){2}, 1);
  etrt_pb_write_varint_field(&f, 2, ETRT_ONNX_FLOAT);
  static const float fv[2] = {1.5f, -2.0f};
  etrt_pb_write_raw(&pf, fv, sizeof fv);
  put(&f, 4, &pf);
  CHECK_OK(host_of(&f, &h, out, sizeof out));
  float fo[2];
  memcpy(fo, out, sizeof fo);
  CHECK(h.dtype == ETRT_DTYPE_FLOAT32 && fo[0] == 1.5f && fo[1] == -2.0f);
  W dd = msg();
  etrt_pb_write_varint_field(&dd, 2, ETRT_ONNX_DOUBLE); /* rank 0: one element */
  double dv = 3.25;
  uint64_t dbits;
  memcpy(&dbits, &dv, 8);
  etrt_pb_write_fixed64_field(&dd, 10, dbits); /* unpacked */
  CHECK_OK(host_of(&dd, &h, out, sizeof out));
  double dout;
  memcpy(&dout, out, 8);
  CHECK(h.dtype == ETRT_DTYPE_FLOAT64 && h.rank == 0 && h.numel == 1 && dout == 3.25);
  /* An empty tensor needs no data and has a valid address. */
  W e = msg();
  put_dims(&e, (const int64_t[]){0, 4}, 2);
  etrt_pb_write_varint_field(&e, 2, ETRT_ONNX_FLOAT);
  CHECK_OK(host_of(&e, &h, NULL, 0));
  CHECK(h.nbytes == 0 && h.numel == 0);
}

static void test_typed_refusals(void) {
  etrt_onnx_host_tensor h;
  static const int64_t d2[1] = {2};
  W t = tensor_varints("a", ETRT_ONNX_INT8, d2, 1, 5, (const int64_t[]){1, 200}, 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT,
              "tensor 'a': int32_data[1] = 200 is out of range for INT8");
  t = tensor_varints("b", ETRT_ONNX_BOOL, d2, 1, 5, (const int64_t[]){1, 2}, 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "out of range for BOOL");
  t = tensor_varints("u", ETRT_ONNX_UINT32, d2, 1, 11, (const int64_t[]){1, 1LL << 32}, 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "out of range for UINT32");
  /* An int32_data value that is not an int32 at all is refused while parsing. */
  t = tensor_varints("i", ETRT_ONNX_INT32, d2, 1, 5, (const int64_t[]){1, 1LL << 40}, 2);
  CHECK_FAILS(
      host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT,
      "ModelProto.graph.initializer[0].int32_data: value 1099511627776 out of range for int32");
  /* Values in the field ONNX does not use for the type. */
  t = tensor_varints("w", ETRT_ONNX_INT64, d2, 1, 5, (const int64_t[]){1, 2}, 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT,
              "INT64 values are stored in int32_data, ONNX keeps them in int64_data");
  /* Too few values for the dims. */
  t = tensor_varints("c", ETRT_ONNX_INT64, (const int64_t[]){2, 2}, 2, 7, (const int64_t[]){1, 2},
                     2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT,
              "int64_data holds 2 values, dims [2, 2] of INT64 need 4");
  /* Values in two fields. */
  t = tensor_varints("two", ETRT_ONNX_INT64, d2, 1, 7, (const int64_t[]){1, 2}, 2);
  etrt_pb_write_bytes_field(&t, 9, "0123456789abcdef", 16);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT,
              "tensor has values in both int64_data and raw_data");
  /* Element types etrt has no dtype for. */
  W s = msg();
  put_dims(&s, d2, 1);
  etrt_pb_write_varint_field(&s, 2, ETRT_ONNX_STRING);
  etrt_pb_write_string_field(&s, 6, "a");
  etrt_pb_write_string_field(&s, 6, "b");
  CHECK_FAILS(host_of(&s, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED,
              "ONNX element type STRING (8) is not supported");
  static const float cplx[4] = {1, 2, 3, 4};
  t = tensor_raw("z", ETRT_ONNX_COMPLEX64, d2, 1, cplx, sizeof cplx);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED, "COMPLEX64 (14)");
  t = tensor_raw("f8", 17, d2, 1, "ab", 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED, "FLOAT8E4M3FN (17)");
  t = tensor_raw("u", 0, d2, 1, "ab", 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED, "UNDEFINED (0)");
  t = tensor_raw("q", 99, d2, 1, "ab", 2);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED, "type 99 (99)");
  /* Rank above the engine's limit. */
  static const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  t = tensor_raw("r9", ETRT_ONNX_UINT8, d9, 9, "a", 1);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED,
              "tensor 'r9': rank 9 exceeds etrt's 8");
  /* Segments. */
  W sg = msg(), seg = msg();
  put(&sg, 3, &seg);
  CHECK_FAILS(host_of(&sg, &h, NULL, 0), ETRT_ERROR_UNSUPPORTED,
              "ModelProto.graph.initializer[0]: TensorProto.segment (a chunked tensor) is not "
              "supported");
  /* data_location out of range. */
  W dl = msg();
  etrt_pb_write_varint_field(&dl, 14, 2);
  CHECK_FAILS(host_of(&dl, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "data_location 2");
  /* No data where elements are needed. */
  W nd = msg();
  put_dims(&nd, d2, 1);
  etrt_pb_write_varint_field(&nd, 2, ETRT_ONNX_FLOAT);
  CHECK_FAILS(host_of(&nd, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "the tensor has no data");
}

static void test_dims_and_bytes(void) {
  etrt_onnx_host_tensor h;
  static const float v[3] = {1, 2, 3};
  W t = tensor_raw("w", ETRT_ONNX_FLOAT, (const int64_t[]){2, 3}, 2, v, sizeof v);
  size_t size;
  uint8_t *bytes = model_with_initializer(&t, &size);
  etrt_onnx_model *m;
  etrt_status s = etrt_onnx_model_parse(bytes, size, NULL, &m);
  CHECK_EQ_INT(s, ETRT_ERROR_INVALID_FORMAT);
  /* The field path, the tensor's name, the sizes and the byte of the TensorProto. */
  CHECK_STR_CONTAINS(etrt_last_error(),
                     "ModelProto.graph.initializer[0]: tensor 'w': raw_data holds 12 bytes, dims "
                     "[2, 3] of FLOAT need 6 x 4 at byte ");
  free(bytes);
  t = tensor_raw("neg", ETRT_ONNX_FLOAT, (const int64_t[]){-1, 3}, 2, v, sizeof v);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "dims[0] is negative (-1)");
  t = tensor_raw("big", ETRT_ONNX_FLOAT, (const int64_t[]){1LL << 40, 1LL << 40}, 2, v, sizeof v);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "overflow");
  /* Large dims whose product fits int64 but whose bytes do not fit memory. */
  t = tensor_raw("huge", ETRT_ONNX_DOUBLE, (const int64_t[]){1LL << 61}, 1, v, sizeof v);
  CHECK_FAILS(host_of(&t, &h, NULL, 0), ETRT_ERROR_INVALID_FORMAT, "raw_data holds 12 bytes");
}

/* raw_data at an aligned address is used in place; elsewhere it is copied aligned. */
static void test_raw_alignment(void) {
  static const float v[4] = {1, 2, 3, 4};
  W t = tensor_raw("w", ETRT_ONNX_FLOAT, (const int64_t[]){4}, 1, v, sizeof v);
  size_t size;
  uint8_t *bytes = model_with_initializer(&t, &size);
  uint8_t *buffer = malloc(size + 8);
  int in_place = 0, copied = 0;
  for (size_t shift = 0; shift < 4; ++shift) {
    memcpy(buffer + shift, bytes, size);
    etrt_onnx_model *m;
    CHECK_OK(etrt_onnx_model_parse(buffer + shift, size, NULL, &m));
    if (m == NULL) continue;
    const etrt_onnx_tensor *w = &etrt_onnx_model_graph(m)->initializers[0];
    etrt_onnx_host_tensor h;
    CHECK_OK(etrt_onnx_tensor_to_host(w, &h));
    CHECK((uintptr_t)h.data % 4 == 0);
    CHECK(memcmp(h.data, v, sizeof v) == 0);
    if ((uintptr_t)w->raw_data % 4 == 0) {
      CHECK(h.data == (const void *)w->raw_data);
      ++in_place;
    } else {
      CHECK(h.data != (const void *)w->raw_data);
      ++copied;
    }
    etrt_onnx_host_tensor_release(&h);
    etrt_onnx_model_free(m);
  }
  CHECK_EQ_INT(in_place, 1);
  CHECK_EQ_INT(copied, 3);
  free(buffer);
  free(bytes);
}

/* --- external data ---------------------------------------------------------------------- */

static W tensor_external(const char *name, const int64_t *dims, size_t rank, const char *location,
                         const char *offset, const char *length) {
  W t = msg();
  put_dims(&t, dims, rank);
  etrt_pb_write_varint_field(&t, 2, ETRT_ONNX_FLOAT);
  etrt_pb_write_string_field(&t, 8, name);
  const char *keys[3] = {"location", "offset", "length"};
  const char *values[3] = {location, offset, length};
  for (int i = 0; i < 3; ++i) {
    if (values[i] == NULL) continue;
    W e = msg();
    etrt_pb_write_string_field(&e, 1, keys[i]);
    etrt_pb_write_string_field(&e, 2, values[i]);
    put(&t, 13, &e);
  }
  etrt_pb_write_varint_field(&t, 14, 1);
  return t;
}

static const char *tmp_path(const char *name) {
  static char path[4][512];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", etrt_test_tmpdir(), name);
  return p;
}

/* Writes a model with one external initializer into the temporary folder and loads it. */
static etrt_status load_external(const int64_t *dims, size_t rank, const char *location,
                                 const char *offset, const char *length, float *first) {
  W t = tensor_external("ext", dims, rank, location, offset, length);
  size_t size;
  uint8_t *bytes = model_with_initializer(&t, &size);
  CHECK_OK(etrt_file_write_atomic(tmp_path("models/m.onnx"), bytes, size));
  free(bytes);
  etrt_onnx_model *m;
  etrt_status s = etrt_onnx_model_load_file(tmp_path("models/m.onnx"), &m);
  if (s != ETRT_OK) return s;
  etrt_onnx_host_tensor h;
  s = etrt_onnx_tensor_to_host(&etrt_onnx_model_graph(m)->initializers[0], &h);
  if (s == ETRT_OK) {
    if (h.nbytes >= 4) memcpy(first, h.data, 4);
    etrt_onnx_host_tensor_release(&h);
  }
  etrt_onnx_model_free(m);
  return s;
}

static void test_external_data(void) {
  mkdir(tmp_path("models"), 0755);
  mkdir(tmp_path("models/weights"), 0755);
  float data[8];
  for (int i = 0; i < 8; ++i) data[i] = (float)i + 0.5f;
  CHECK_OK(etrt_file_write_atomic(tmp_path("models/weights/w.bin"), data, sizeof data));
  CHECK_OK(etrt_file_write_atomic(tmp_path("secret.bin"), data, sizeof data));
  float first = 0;
  static const int64_t d4[1] = {4}, d8[1] = {8};
  CHECK_OK(load_external(d4, 1, "weights/w.bin", "16", "16", &first));
  CHECK(first == 4.5f);
  CHECK_OK(load_external(d8, 1, "weights/w.bin", NULL, NULL, &first)); /* the whole file */
  CHECK(first == 0.5f);
  CHECK_OK(load_external(d4, 1, "./weights/w.bin", "16", NULL, &first)); /* to the end */
  CHECK(first == 4.5f);
  /* Unaligned offsets are copied to aligned memory. */
  CHECK_OK(etrt_file_write_atomic(tmp_path("models/odd.bin"),
                                  (const uint8_t[]){0, 0, 0, 0, 0x80, 0x3f}, 6));
  CHECK_OK(load_external((const int64_t[]){1}, 1, "odd.bin", "2", "4", &first));
  CHECK(first == 1.0f);

  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "16", "32", &first), ETRT_ERROR_INVALID_FORMAT,
              "external data [16, +32) lies outside 'weights/w.bin' (32 bytes)");
  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "40", NULL, &first), ETRT_ERROR_INVALID_FORMAT,
              "lies outside");
  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "18446744073709551615", "16", &first),
              ETRT_ERROR_INVALID_FORMAT, "lies outside");
  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "0", "8", &first), ETRT_ERROR_INVALID_FORMAT,
              "external data holds 8 bytes, dims [4] of FLOAT need 4 x 4");
  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "1x", NULL, &first), ETRT_ERROR_INVALID_FORMAT,
              "external_data 'offset' = '1x' is not a decimal number");
  CHECK_FAILS(load_external(d4, 1, "weights/w.bin", "99999999999999999999", NULL, &first),
              ETRT_ERROR_INVALID_FORMAT, "not a decimal number that fits in 64 bits");
  CHECK_FAILS(load_external(d4, 1, "../secret.bin", NULL, "16", &first), ETRT_ERROR_INVALID_FORMAT,
              "leaves the model's folder ('..')");
  CHECK_FAILS(load_external(d4, 1, "weights/../../secret.bin", NULL, "16", &first),
              ETRT_ERROR_INVALID_FORMAT, "leaves the model's folder");
  CHECK_FAILS(load_external(d4, 1, tmp_path("secret.bin"), NULL, "16", &first),
              ETRT_ERROR_INVALID_FORMAT, "is an absolute path");
  CHECK_FAILS(load_external(d4, 1, "", NULL, NULL, &first), ETRT_ERROR_INVALID_FORMAT,
              "external data has no location");
  CHECK_FAILS(load_external(d4, 1, "missing.bin", NULL, NULL, &first), ETRT_ERROR_NOT_FOUND,
              "external data file");
  /* A symbolic link that leads out of the folder. */
  CHECK(symlink(tmp_path("secret.bin"), tmp_path("models/link.bin")) == 0);
  CHECK_FAILS(load_external(d4, 1, "link.bin", NULL, "16", &first), ETRT_ERROR_INVALID_FORMAT,
              "outside the model's folder");
  /* The message carries the field path and the model's name. */
  CHECK_FAILS(load_external(d4, 1, "../secret.bin", NULL, "16", &first), ETRT_ERROR_INVALID_FORMAT,
              "m.onnx': ModelProto.graph.initializer[0]: external data location");

  /* From memory without a folder, external data is refused. */
  W t = tensor_external("ext", d4, 1, "weights/w.bin", NULL, NULL);
  size_t size;
  uint8_t *bytes = model_with_initializer(&t, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_UNSUPPORTED,
              "tensor 'ext' keeps its data in external file 'weights/w.bin', which needs the "
              "model's folder");
  /* EXTERNAL with values in the file too. */
  t = tensor_external("both", d4, 1, "weights/w.bin", NULL, NULL);
  etrt_pb_write_bytes_field(&t, 9, data, 16);
  bytes = model_with_initializer(&t, &size);
  CHECK_FAILS(parse_bytes(bytes, size), ETRT_ERROR_INVALID_FORMAT,
              "is EXTERNAL but also has values in the file");
  etrt_onnx_model *m;
  CHECK_FAILS(etrt_onnx_model_load_file(tmp_path("nothing.onnx"), &m), ETRT_ERROR_IO,
              "cannot open");
}

/* --- .pb tensor files --------------------------------------------------------------------- */

static void test_tensor_pb_round_trip(void) {
  static const etrt_dtype dtypes[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_UINT8,  ETRT_DTYPE_INT8,
                                      ETRT_DTYPE_UINT16,  ETRT_DTYPE_INT16,  ETRT_DTYPE_INT32,
                                      ETRT_DTYPE_INT64,   ETRT_DTYPE_BOOL,   ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_FLOAT64, ETRT_DTYPE_UINT32, ETRT_DTYPE_UINT64,
                                      ETRT_DTYPE_BFLOAT16};
  uint8_t values[6 * 8];
  for (size_t i = 0; i < sizeof values; ++i) values[i] = (uint8_t)(i * 37 % 2);
  for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; ++k) {
    etrt_tensor_view view = {.data = values, .dtype = dtypes[k], .rank = 2, .sizes = {2, 3}};
    const char *path = tmp_path("t.pb");
    CHECK_OK(etrt_tensor_pb_write_file(path, "input_0", &view));
    etrt_tensor_pb t;
    CHECK_OK(etrt_tensor_pb_read_file(path, &t));
    CHECK_EQ_INT(t.dtype, dtypes[k]);
    CHECK_EQ_INT(t.rank, 2);
    CHECK_EQ_INT(t.sizes[1], 3);
    CHECK(strcmp(t.name, "input_0") == 0);
    CHECK_EQ_INT(t.nbytes, 6 * etrt_dtype_size(dtypes[k]));
    CHECK(t.data != NULL && memcmp(t.data, values, t.nbytes) == 0);
    etrt_tensor_pb_release(&t);
  }
  /* A scalar without a name. */
  int64_t scalar = -42;
  etrt_tensor_view view = {.data = &scalar, .dtype = ETRT_DTYPE_INT64, .rank = 0};
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_tensor_pb_encode(NULL, &view, &bytes, &size));
  etrt_tensor_pb t;
  CHECK_OK(etrt_tensor_pb_read(bytes, size, "scalar", &t));
  CHECK(t.rank == 0 && t.nbytes == 8 && *(int64_t *)t.data == -42 && t.name[0] == '\0');
  etrt_tensor_pb_release(&t);
  free(bytes);
}

static void test_tensor_pb_refusals(void) {
  etrt_tensor_pb t;
  CHECK_FAILS(etrt_tensor_pb_read((const uint8_t *)"", 0, "empty.pb", &t), ETRT_ERROR_UNSUPPORTED,
              "'empty.pb': tensor '' at byte 0: ONNX element type UNDEFINED (0) is not supported");
  CHECK_FAILS(etrt_tensor_pb_read((const uint8_t *)"\x08\x80", 2, "cut.pb", &t),
              ETRT_ERROR_INVALID_FORMAT, "'cut.pb': TensorProto: varint truncated at byte 1");
  /* A SequenceProto (name, elem_type, tensor_values) would read as a TensorProto with a
   * segment: it is named for what it is. */
  W seq = msg(), inner = msg();
  etrt_pb_write_string_field(&seq, 1, "seq");
  etrt_pb_write_varint_field(&seq, 2, 1);
  put(&seq, 3, &inner);
  size_t size;
  uint8_t *bytes = finish(&seq, &size);
  CHECK_FAILS(etrt_tensor_pb_read(bytes, size, "seq.pb", &t), ETRT_ERROR_UNSUPPORTED,
              "'seq.pb': holds a SequenceProto or OptionalProto 'seq', not a TensorProto");
  free(bytes);
  /* External data in a standalone file. */
  W ext = tensor_external("e", (const int64_t[]){1}, 1, "x.bin", NULL, NULL);
  bytes = finish(&ext, &size);
  CHECK_FAILS(etrt_tensor_pb_read(bytes, size, "ext.pb", &t), ETRT_ERROR_UNSUPPORTED,
              "needs the model's folder");
  free(bytes);
  CHECK_FAILS(etrt_tensor_pb_read_file(tmp_path("absent.pb"), &t), ETRT_ERROR_IO, "cannot open");
  /* Writing refuses what ONNX cannot hold. */
  etrt_tensor_view view = {.data = NULL, .dtype = ETRT_DTYPE_INVALID, .rank = 1, .sizes = {1}};
  CHECK_FAILS(etrt_tensor_pb_encode("x", &view, &bytes, &size), ETRT_ERROR_INVALID_ARGUMENT,
              "no ONNX element type");
  view.dtype = ETRT_DTYPE_FLOAT32;
  CHECK_FAILS(etrt_tensor_pb_encode("x", &view, &bytes, &size), ETRT_ERROR_INVALID_ARGUMENT,
              "NULL data");
  view.rank = 9;
  CHECK_FAILS(etrt_tensor_pb_encode("x", &view, &bytes, &size), ETRT_ERROR_INVALID_ARGUMENT,
              "rank 9");
}

static void test_dtype_mapping(void) {
  static const struct {
    int32_t onnx;
    etrt_dtype dtype;
  } pairs[] = {{1, ETRT_DTYPE_FLOAT32},  {2, ETRT_DTYPE_UINT8},   {3, ETRT_DTYPE_INT8},
               {4, ETRT_DTYPE_UINT16},   {5, ETRT_DTYPE_INT16},   {6, ETRT_DTYPE_INT32},
               {7, ETRT_DTYPE_INT64},    {9, ETRT_DTYPE_BOOL},    {10, ETRT_DTYPE_FLOAT16},
               {11, ETRT_DTYPE_FLOAT64}, {12, ETRT_DTYPE_UINT32}, {13, ETRT_DTYPE_UINT64},
               {16, ETRT_DTYPE_BFLOAT16}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) {
    etrt_dtype d;
    int32_t back;
    CHECK_OK(etrt_onnx_dtype_to_etrt(pairs[i].onnx, &d));
    CHECK_EQ_INT(d, pairs[i].dtype);
    CHECK_OK(etrt_onnx_dtype_from_etrt(d, &back));
    CHECK_EQ_INT(back, pairs[i].onnx);
  }
  etrt_dtype d;
  CHECK_FAILS(etrt_onnx_dtype_to_etrt(15, &d), ETRT_ERROR_UNSUPPORTED, "COMPLEX128 (15)");
  CHECK_FAILS(etrt_onnx_dtype_to_etrt(-3, &d), ETRT_ERROR_UNSUPPORTED, "type -3");
  CHECK(strcmp(etrt_onnx_attr_type_name(ETRT_ONNX_ATTR_GRAPHS), "GRAPHS") == 0);
}

int main(void) {
  RUN_TEST(test_model_fields);
  RUN_TEST(test_truncation);
  RUN_TEST(test_structure_refusals);
  RUN_TEST(test_nesting_limit);
  RUN_TEST(test_typed_fields);
  RUN_TEST(test_typed_refusals);
  RUN_TEST(test_dims_and_bytes);
  RUN_TEST(test_raw_alignment);
  RUN_TEST(test_external_data);
  RUN_TEST(test_tensor_pb_round_trip);
  RUN_TEST(test_tensor_pb_refusals);
  RUN_TEST(test_dtype_mapping);
  return TEST_EXIT();
}
