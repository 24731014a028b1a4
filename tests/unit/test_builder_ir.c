/* The builder's graph IR, ONNX import and --shape bounds. */
#include <stdint.h>

#include "builder/import.h"
#include "builder/ir.h"
#include "builder/shape_spec.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static int32_t value(etrt_ir_graph *g, const char *name) {
  int32_t id = -1;
  CHECK_OK(etrt_ir_add_value(g, name, &id));
  return id;
}

static void test_values_and_names(void) {
  etrt_ir_graph *g;
  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t a = value(g, "a");
  int32_t dup;
  CHECK_FAILS(etrt_ir_add_value(g, "a", &dup), ETRT_ERROR_INVALID_ARGUMENT, "'a' is defined twice");
  int32_t u1, u2;
  CHECK_OK(etrt_ir_add_value_unique(g, "a", &u1));
  CHECK_OK(etrt_ir_add_value_unique(g, "a", &u2));
  CHECK(u1 != u2 && u1 != a);
  CHECK(strcmp(g->values[u1].name, "a") != 0 &&
        strcmp(g->values[u1].name, g->values[u2].name) != 0);
  CHECK_EQ_INT(etrt_ir_find_value(g, "a"), a);
  CHECK_EQ_INT(etrt_ir_find_value_n(g, "abc", 1), a);
  CHECK_EQ_INT(etrt_ir_find_value(g, "missing"), -1);
  /* Enough values to grow the name index several times. */
  char name[32];
  for (int i = 0; i < 2000; ++i) {
    snprintf(name, sizeof name, "v%d", i);
    value(g, name);
  }
  CHECK_EQ_INT(etrt_ir_find_value(g, "v1234"), a + 3 + 1234);
  etrt_ir_graph_destroy(g);
}

static void test_sort_and_uses(void) {
  etrt_ir_graph *g;
  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t x = value(g, "x"), t = value(g, "t"), y = value(g, "y");
  CHECK_OK(etrt_ir_add_input(g, x));
  /* Listed consumer first: sort must put the producer first. */
  CHECK_OK(etrt_ir_add_node(g, "Relu", "", "second", 1, &t, 1, &y, 0, NULL, NULL));
  CHECK_OK(etrt_ir_add_node(g, "Relu", "", NULL, 1, &x, 1, &t, 0, NULL, NULL));
  CHECK(strcmp(g->nodes[1].name, "Relu_1") == 0); /* generated name */
  CHECK_OK(etrt_ir_add_output(g, y, NULL));
  CHECK_OK(etrt_ir_sort(g));
  CHECK(strcmp(g->nodes[0].name, "Relu_1") == 0);
  CHECK(strcmp(g->nodes[1].name, "second") == 0);
  CHECK_EQ_INT(g->values[t].producer, 0);
  CHECK_EQ_INT(g->values[y].producer, 1);
  CHECK_EQ_INT(etrt_ir_use_count(g, t), 1);
  CHECK_EQ_INT(etrt_ir_single_consumer(g, t), 1);
  CHECK_EQ_INT(etrt_ir_single_consumer(g, y), -1); /* a graph output */
  CHECK(etrt_ir_is_output(g, y));
  etrt_ir_replace_uses(g, t, x);
  CHECK_EQ_INT(g->nodes[1].inputs[0], x);
  CHECK_EQ_INT(etrt_ir_use_count(g, t), 0);
  /* A second writer of a value is refused. */
  CHECK_FAILS(etrt_ir_add_node(g, "Relu", "", "again", 1, &x, 1, &y, 0, NULL, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "writes 'y', which is already defined");
  etrt_ir_graph_destroy(g);
}

static void test_sort_refusals(void) {
  etrt_ir_graph *g;
  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t a = value(g, "a"), b = value(g, "b");
  CHECK_OK(etrt_ir_add_node(g, "Relu", "", "n1", 1, &a, 1, &b, 0, NULL, NULL));
  CHECK_OK(etrt_ir_add_node(g, "Relu", "", "n2", 1, &b, 1, &a, 0, NULL, NULL));
  CHECK_FAILS(etrt_ir_sort(g), ETRT_ERROR_INVALID_FORMAT, "cycle");
  etrt_ir_graph_destroy(g);

  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t ghost = value(g, "ghost"), out = value(g, "out");
  CHECK_OK(etrt_ir_add_node(g, "Relu", "", "reader", 1, &ghost, 1, &out, 0, NULL, NULL));
  CHECK_FAILS(etrt_ir_sort(g), ETRT_ERROR_INVALID_FORMAT, "node 'reader' (Relu) reads 'ghost'");
  etrt_ir_graph_destroy(g);
}

static void test_node_edits(void) {
  etrt_ir_graph *g;
  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t x = value(g, "x"), y = value(g, "y");
  etrt_attribute alpha = {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 2.0f};
  int32_t n;
  CHECK_OK(etrt_ir_add_node(g, "Gemm", "", "g", 1, &x, 1, &y, 1, &alpha, &n));
  CHECK_OK(etrt_ir_node_set_input(g, &g->nodes[n], 2, x));
  CHECK_EQ_INT(g->nodes[n].num_inputs, 3);
  CHECK_EQ_INT(g->nodes[n].inputs[1], -1);
  etrt_attribute beta = {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.5f};
  etrt_attribute alpha3 = {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 3.0f};
  CHECK_OK(etrt_ir_node_set_attribute(g, &g->nodes[n], &beta));
  CHECK_OK(etrt_ir_node_set_attribute(g, &g->nodes[n], &alpha3));
  CHECK_EQ_INT(g->nodes[n].num_attributes, 2);
  CHECK_NEAR(etrt_ir_node_attribute_float(&g->nodes[n], "alpha", 0), 3.0, 0);
  CHECK_NEAR(etrt_ir_node_attribute_float(&g->nodes[n], "beta", 0), 0.5, 0);
  CHECK_NEAR(etrt_ir_node_attribute_float(&g->nodes[n], "gamma", 7), 7.0, 0);
  etrt_ir_graph_destroy(g);
}

/* --- import ----------------------------------------------------------------------- */

static etrt_status import_bytes(const uint8_t *bytes, size_t size, etrt_onnx_model **model,
                                etrt_ir_graph **g) {
  *g = NULL;
  etrt_status s = etrt_onnx_model_parse(bytes, size, NULL, model);
  if (s != ETRT_OK) return s;
  return etrt_import_onnx(*model, g);
}

static void test_import_mlp(void) {
  size_t size;
  uint8_t *bytes = tm_mlp(1, &size);
  etrt_onnx_model *model;
  etrt_ir_graph *g;
  CHECK_OK(import_bytes(bytes, size, &model, &g));
  CHECK_EQ_INT(g->opset, 13);
  CHECK_EQ_INT(g->num_inputs, 1);
  CHECK_EQ_INT(g->num_outputs, 1);
  CHECK_EQ_INT(g->num_nodes, 5);
  const etrt_ir_value *x = &g->values[g->inputs[0]];
  CHECK(strcmp(x->name, "x") == 0 && x->rank == 2);
  CHECK(x->symbol[0] != NULL && strcmp(x->symbol[0], "batch") == 0);
  CHECK_EQ_INT(x->min[1], 4);
  const etrt_ir_value *w1 = &g->values[etrt_ir_find_value(g, "w1")];
  CHECK(w1->is_constant && w1->nbytes == 32 * sizeof(float) && w1->max[1] == 8);
  etrt_ir_graph_destroy(g);
  etrt_onnx_model_free(model);
  free(bytes);
}

static void test_import_upgrades(void) {
  /* Opset 11: Squeeze axes attribute -> constant input; Softmax gets _opset. */
  tm_model m;
  tm_init(&m);
  const char *dims[3] = {"2", "1", "3"};
  tm_input(&m, "x", 3, dims);
  int64_t axes[1] = {1};
  tm_node(&m, "Squeeze", "sq", "x", "s", 1, tm_attr_ints("axes", 1, axes));
  tm_node(&m, "Softmax", "sm", "s", "y", 1, tm_attr_int("axis", 1));
  tm_node(&m, "Constant", "c", "", "k", 1, tm_attr_int("value_int", 7));
  tm_output(&m, "y");
  size_t size;
  uint8_t *bytes = tm_finish(&m, 11, &size);
  etrt_onnx_model *model;
  etrt_ir_graph *g;
  CHECK_OK(import_bytes(bytes, size, &model, &g));
  const etrt_ir_node *sq = &g->nodes[0], *sm = &g->nodes[1];
  CHECK(strcmp(sq->op_type, "Squeeze") == 0 && sq->num_inputs == 2);
  CHECK(etrt_ir_node_attribute(sq, "axes") == NULL);
  const etrt_ir_value *a = &g->values[sq->inputs[1]];
  CHECK(a->is_constant && a->dtype == ETRT_DTYPE_INT64 && ((const int64_t *)a->data)[0] == 1);
  CHECK_EQ_INT(etrt_ir_node_attribute_int(sm, "_opset", 0), 11);
  const etrt_ir_value *k = &g->values[etrt_ir_find_value(g, "k")];
  CHECK(k->is_constant && k->rank == 0 && ((const int64_t *)k->data)[0] == 7);
  CHECK_EQ_INT(g->num_nodes, 2); /* the Constant node became a constant */
  etrt_ir_graph_destroy(g);
  etrt_onnx_model_free(model);
  free(bytes);
}

static void test_import_refusals(void) {
  etrt_onnx_model *model;
  etrt_ir_graph *g;
  size_t size;
  uint8_t *bytes;
  tm_model m;
  const char *dims[1] = {"2"};

  /* Another domain. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  etrt_pb_writer n;
  etrt_pb_writer_init(&n);
  etrt_pb_write_string_field(&n, 1, "x");
  etrt_pb_write_string_field(&n, 2, "y");
  etrt_pb_write_string_field(&n, 3, "fused");
  etrt_pb_write_string_field(&n, 4, "FusedGemm");
  etrt_pb_write_string_field(&n, 7, "com.microsoft");
  tm_put(&m.graph, 1, &n);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(import_bytes(bytes, size, &model, &g), ETRT_ERROR_UNSUPPORTED,
              "node 'fused' (FusedGemm): operator 'FusedGemm' of domain 'com.microsoft' is not "
              "supported");
  etrt_onnx_model_free(model);
  free(bytes);

  /* A domain etrt does not import at all names the operator and the domain. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  etrt_pb_writer_init(&n);
  etrt_pb_write_string_field(&n, 1, "x");
  etrt_pb_write_string_field(&n, 2, "y");
  etrt_pb_write_string_field(&n, 3, "custom");
  etrt_pb_write_string_field(&n, 4, "Gelu");
  etrt_pb_write_string_field(&n, 7, "org.example");
  tm_put(&m.graph, 1, &n);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(import_bytes(bytes, size, &model, &g), ETRT_ERROR_UNSUPPORTED,
              "node 'custom' (Gelu): operator 'Gelu' of domain 'org.example' is not supported");
  etrt_onnx_model_free(model);
  free(bytes);

  /* A com.microsoft operator in a form etrt does not import says which part. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  etrt_pb_writer_init(&n);
  etrt_pb_write_string_field(&n, 1, "x");
  etrt_pb_write_string_field(&n, 2, "y");
  etrt_pb_write_string_field(&n, 2, "mean");
  etrt_pb_write_string_field(&n, 1, "x");
  etrt_pb_write_string_field(&n, 1, "x");
  etrt_pb_write_string_field(&n, 3, "sln");
  etrt_pb_write_string_field(&n, 4, "SkipLayerNormalization");
  etrt_pb_write_string_field(&n, 7, "com.microsoft");
  tm_put(&m.graph, 1, &n);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(import_bytes(bytes, size, &model, &g), ETRT_ERROR_UNSUPPORTED,
              "node 'sln' (SkipLayerNormalization): the mean and inv_std_var outputs");
  etrt_onnx_model_free(model);
  free(bytes);

  /* A read of nothing. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  tm_node(&m, "Add", "adder", "x,nowhere", "y", 0);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(import_bytes(bytes, size, &model, &g), ETRT_ERROR_INVALID_FORMAT,
              "node 'adder' (Add) reads 'nowhere'");
  etrt_onnx_model_free(model);
  free(bytes);

  /* An output that no node computes (a graph input returned as it is): a copy of the
   * input writes it, under the model's name. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  tm_output(&m, "x");
  bytes = tm_finish(&m, 13, &size);
  CHECK_OK(import_bytes(bytes, size, &model, &g));
  CHECK_EQ_INT(g->num_nodes, 1);
  CHECK_EQ_INT(g->num_outputs, 1);
  CHECK(strcmp(g->nodes[0].op_type, "Identity") == 0);
  CHECK_EQ_INT(g->nodes[0].inputs[0], etrt_ir_find_value(g, "x"));
  CHECK_EQ_INT(g->outputs[0], g->nodes[0].outputs[0]);
  CHECK(g->outputs[0] != etrt_ir_find_value(g, "x"));
  CHECK(strcmp(g->output_names[0], "x") == 0);
  etrt_ir_graph_destroy(g);
  etrt_onnx_model_free(model);
  free(bytes);

  /* Two writers of one value. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  tm_node(&m, "Relu", "r1", "x", "y", 0);
  tm_node(&m, "Relu", "r2", "x", "y", 0);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(import_bytes(bytes, size, &model, &g), ETRT_ERROR_INVALID_ARGUMENT,
              "'y' is defined twice");
  etrt_onnx_model_free(model);
  free(bytes);

  /* A subgraph attribute. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  etrt_pb_writer attr, sub;
  etrt_pb_writer_init(&attr);
  etrt_pb_writer_init(&sub);
  etrt_pb_write_string_field(&sub, 2, "body");
  etrt_pb_write_string_field(&attr, 1, "then_branch");
  etrt_pb_write_varint_field(&attr, 20, ETRT_ONNX_ATTR_GRAPH);
  tm_put(&attr, 6, &sub);
  tm_node(&m, "If", "branch", "x", "y", 1, attr);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(
      import_bytes(bytes, size, &model, &g), ETRT_ERROR_INVALID_FORMAT,
      "node 'branch' (If): then_branch: node 'branch' (If): body: the graph has no outputs");
  etrt_onnx_model_free(model);
  free(bytes);

  /* A subgraph where no control flow takes one. */
  tm_init(&m);
  tm_input(&m, "x", 1, dims);
  etrt_pb_writer_init(&attr);
  etrt_pb_writer_init(&sub);
  etrt_pb_write_string_field(&sub, 2, "body");
  etrt_pb_write_string_field(&attr, 1, "body");
  etrt_pb_write_varint_field(&attr, 20, ETRT_ONNX_ATTR_GRAPH);
  tm_put(&attr, 6, &sub);
  tm_node(&m, "Relu", "relu", "x", "y", 1, attr);
  tm_output(&m, "y");
  bytes = tm_finish(&m, 13, &size);
  CHECK_FAILS(
      import_bytes(bytes, size, &model, &g), ETRT_ERROR_UNSUPPORTED,
      "node 'relu' (Relu): attribute 'body' is a subgraph, which only If, Loop and Scan take");
  etrt_onnx_model_free(model);
  free(bytes);
}

/* --- --shape ---------------------------------------------------------------------- */

static etrt_ir_graph *two_inputs(void) {
  /* a[batch, seq, 4], b[batch, ?] */
  etrt_ir_graph *g;
  CHECK_OK(etrt_ir_graph_create(&g));
  int32_t a = value(g, "a"), b = value(g, "b:0");
  etrt_ir_value *va = &g->values[a], *vb = &g->values[b];
  va->rank = 3;
  va->min[0] = va->max[0] = -1;
  va->symbol[0] = "batch";
  va->min[1] = va->max[1] = -1;
  va->symbol[1] = "seq";
  va->min[2] = va->max[2] = 4;
  vb->rank = 2;
  vb->min[0] = vb->max[0] = -1;
  vb->symbol[0] = "batch";
  vb->min[1] = vb->max[1] = -1;
  CHECK_OK(etrt_ir_add_input(g, a));
  CHECK_OK(etrt_ir_add_input(g, b));
  return g;
}

static void test_shape_specs(void) {
  etrt_ir_graph *g = two_inputs();
  const char *specs[] = {"batch:1:8", "seq:16", "b:0:1x5:8x5"};
  CHECK_OK(etrt_shape_specs_apply(g, specs, 3));
  const etrt_ir_value *a = &g->values[0], *b = &g->values[1];
  CHECK(a->min[0] == 1 && a->max[0] == 8 && a->min[1] == 16 && a->max[1] == 16);
  CHECK(b->min[0] == 1 && b->max[0] == 8 && b->min[1] == 5 && b->max[1] == 5);
  etrt_ir_graph_destroy(g);

  /* An input's own bound wins over its symbol's. */
  g = two_inputs();
  const char *override[] = {"a:2x3x4", "batch:1:8", "b:0:2x6"};
  CHECK_OK(etrt_shape_specs_apply(g, override, 3));
  CHECK(g->values[0].min[0] == 2 && g->values[0].max[0] == 2);
  CHECK(g->values[1].min[0] == 2 && g->values[1].max[1] == 6);
  etrt_ir_graph_destroy(g);
}

static void test_shape_spec_refusals(void) {
  etrt_ir_graph *g = two_inputs();
  const char *none[] = {"seq:4", "b:0:1x5"};
  CHECK_FAILS(etrt_shape_specs_apply(g, none, 2), ETRT_ERROR_UNSUPPORTED,
              "input 'a' axis 0 has the symbolic size 'batch' with no bounds: pass --shape "
              "batch:MIN:MAX");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *unknown_axis[] = {"batch:2", "seq:4"};
  CHECK_FAILS(etrt_shape_specs_apply(g, unknown_axis, 2), ETRT_ERROR_UNSUPPORTED,
              "input 'b:0' axis 1 has no size in the model: pass --shape b:0:DIMS");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *fixed[] = {"a:2x3x5"};
  CHECK_FAILS(etrt_shape_specs_apply(g, fixed, 1), ETRT_ERROR_INVALID_ARGUMENT,
              "axis 2 has the fixed size 4");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *rank[] = {"a:2x3"};
  CHECK_FAILS(etrt_shape_specs_apply(g, rank, 1), ETRT_ERROR_INVALID_ARGUMENT, "has 3 axes");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *order[] = {"batch:8:1"};
  CHECK_FAILS(etrt_shape_specs_apply(g, order, 1), ETRT_ERROR_INVALID_ARGUMENT,
              "minimum 8 is above maximum 1");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *nobody[] = {"height:3"};
  CHECK_FAILS(etrt_shape_specs_apply(g, nobody, 1), ETRT_ERROR_INVALID_ARGUMENT,
              "no input or dimension symbol named 'height'");
  etrt_ir_graph_destroy(g);

  g = two_inputs();
  const char *symbol_dims[] = {"batch:1x2"};
  CHECK_FAILS(etrt_shape_specs_apply(g, symbol_dims, 1), ETRT_ERROR_INVALID_ARGUMENT,
              "is a dimension symbol");
  etrt_ir_graph_destroy(g);

  CHECK_OK(etrt_shape_spec_check("x:1x3x224x224"));
  CHECK_OK(etrt_shape_spec_check("batch:1:64"));
  CHECK_FAILS(etrt_shape_spec_check("x"), ETRT_ERROR_INVALID_ARGUMENT, "expected NAME:N");
  CHECK_FAILS(etrt_shape_spec_check("x:1xx3"), ETRT_ERROR_INVALID_ARGUMENT, "expected");
  CHECK_FAILS(etrt_shape_spec_check(":3"), ETRT_ERROR_INVALID_ARGUMENT, "expected");
  CHECK_FAILS(etrt_shape_spec_check("x:-3"), ETRT_ERROR_INVALID_ARGUMENT, "expected");
  CHECK_FAILS(etrt_shape_spec_check("x:1x1x1x1x1x1x1x1x1"), ETRT_ERROR_INVALID_ARGUMENT,
              "more than 8 axes");
  CHECK_FAILS(etrt_shape_spec_check("x:99999999999999999999"), ETRT_ERROR_INVALID_ARGUMENT,
              "too large");
}

/* The value of a node's string attribute, or NULL. */
static const char *node_string(const etrt_ir_node *node, const char *name) {
  for (uint32_t i = 0; i < node->num_attributes; ++i)
    if (strcmp(node->attributes[i].name, name) == 0 &&
        node->attributes[i].kind == ETRT_ATTRIBUTE_STRING)
      return node->attributes[i].s;
  return NULL;
}

/* Attributes whose default changed with an opset get the old default written out. */
static void test_opset_defaults(void) {
  const char *dims[] = {"1", "1", "4", "4"}, *rois[] = {"1", "4"}, *batch[] = {"1"};
  for (int64_t opset = 10; opset <= 16; opset += 6) {
    tm_model m;
    tm_init(&m);
    tm_input(&m, "x", 4, dims);
    tm_input(&m, "rois", 2, rois);
    tm_input(&m, "batch", 1, batch);
    tm_node(&m, "RoiAlign", "roi", "x,rois,batch", "y", 0);
    tm_output(&m, "y");
    size_t size;
    uint8_t *bytes = tm_finish(&m, opset, &size);
    etrt_onnx_model *model;
    etrt_ir_graph *g;
    CHECK_OK(import_bytes(bytes, size, &model, &g));
    if (g != NULL) {
      const char *mode = node_string(&g->nodes[0], "coordinate_transformation_mode");
      if (opset < 16)
        CHECK(mode != NULL && strcmp(mode, "output_half_pixel") == 0);
      else
        CHECK(mode == NULL);
      etrt_ir_graph_destroy(g);
    }
    etrt_onnx_model_free(model);
    free(bytes);
  }
}

int main(void) {
  RUN_TEST(test_opset_defaults);
  RUN_TEST(test_values_and_names);
  RUN_TEST(test_sort_and_uses);
  RUN_TEST(test_sort_refusals);
  RUN_TEST(test_node_edits);
  RUN_TEST(test_import_mlp);
  RUN_TEST(test_import_upgrades);
  RUN_TEST(test_import_refusals);
  RUN_TEST(test_shape_specs);
  RUN_TEST(test_shape_spec_refusals);
  return TEST_EXIT();
}
