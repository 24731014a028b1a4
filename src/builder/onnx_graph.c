#include "builder/onnx_graph.h"

#include "builder/onnx_attribute.h"
#include "builder/onnx_tensor_proto.h"
#include "builder/onnx_value_info.h"

static etrt_status etrt_onnx_parse_node(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                        const etrt_pb_field *field, etrt_onnx_node *node) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  node->name = node->op_type = node->domain = etrt_onnx_no_str;
  node->offset = field->offset;
  size_t n_in = 0, n_out = 0, n_attr = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "input", &n_in));
        break;
      case 2:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "output", &n_out));
        break;
      case 5:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "attribute", &n_attr));
        break;
      case 3:
        etrt_onnx_path_push(p, ".name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->name));
        break;
      case 4:
        etrt_onnx_path_push(p, ".op_type");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->op_type));
        break;
      case 7:
        etrt_onnx_path_push(p, ".domain");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->domain));
        break;
      default:
        break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  etrt_onnx_str *inputs, *outputs;
  etrt_onnx_attribute *attributes;
  ETRT_ONNX_ALLOC(p, inputs, n_in);
  ETRT_ONNX_ALLOC(p, outputs, n_out);
  ETRT_ONNX_ALLOC(p, attributes, n_attr);
  size_t ii = 0, oo = 0, aa = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number == 1) {
      ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &inputs[ii++]));
    } else if (f.number == 2) {
      ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &outputs[oo++]));
    } else if (f.number == 5) {
      size_t mark = etrt_onnx_path_push(p, ".attribute[%zu]", aa);
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_attribute(p, &c, &f, &attributes[aa++]));
      etrt_onnx_path_pop(p, mark);
    }
  });
  node->inputs = inputs;
  node->input_count = n_in;
  node->outputs = outputs;
  node->output_count = n_out;
  node->attributes = attributes;
  node->attribute_count = n_attr;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_graph_body(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                              const etrt_pb_field *field, etrt_onnx_graph *g);

etrt_status etrt_onnx_parse_graph(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                  const etrt_pb_field *field, etrt_onnx_graph *g) {
  /* The main graph is depth 0; every subgraph attribute opens one more level. */
  if (p->graph_depth > ETRT_ONNX_MAX_GRAPH_DEPTH)
    return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, field->offset,
                          "subgraphs nest deeper than %d levels", ETRT_ONNX_MAX_GRAPH_DEPTH);
  ++p->graph_depth;
  etrt_status status = etrt_onnx_parse_graph_body(p, parent, field, g);
  --p->graph_depth;
  return status;
}

static etrt_status etrt_onnx_parse_graph_body(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                              const etrt_pb_field *field, etrt_onnx_graph *g) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  g->name = etrt_onnx_no_str;
  g->bytes = field->data;
  g->size = field->size;
  g->offset = field->offset;
  size_t n_node = 0, n_init = 0, n_in = 0, n_out = 0, n_vi = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "node", &n_node));
        break;
      case 5:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "initializer", &n_init));
        break;
      case 11:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "input", &n_in));
        break;
      case 12:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "output", &n_out));
        break;
      case 13:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "value_info", &n_vi));
        break;
      case 2:
        etrt_onnx_path_push(p, ".name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &g->name));
        break;
      case 15:
        etrt_onnx_path_push(p, ".sparse_initializer");
        return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, f.offset,
                              "sparse initializers are not supported");
      default:
        break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  etrt_onnx_node *nodes;
  etrt_onnx_tensor *inits;
  etrt_onnx_value_info *inputs, *outputs, *vis;
  ETRT_ONNX_ALLOC(p, nodes, n_node);
  ETRT_ONNX_ALLOC(p, inits, n_init);
  ETRT_ONNX_ALLOC(p, inputs, n_in);
  ETRT_ONNX_ALLOC(p, outputs, n_out);
  ETRT_ONNX_ALLOC(p, vis, n_vi);
  size_t in = 0, ii = 0, ni = 0, no = 0, nv = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        etrt_onnx_path_push(p, ".node[%zu]", in);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_node(p, &c, &f, &nodes[in++]));
        break;
      case 5:
        etrt_onnx_path_push(p, ".initializer[%zu]", ii);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_tensor(p, &c, &f, &inits[ii++]));
        break;
      case 11:
        etrt_onnx_path_push(p, ".input[%zu]", ni);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &inputs[ni++]));
        break;
      case 12:
        etrt_onnx_path_push(p, ".output[%zu]", no);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &outputs[no++]));
        break;
      case 13:
        etrt_onnx_path_push(p, ".value_info[%zu]", nv);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &vis[nv++]));
        break;
      default:
        break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  g->nodes = nodes;
  g->node_count = n_node;
  g->initializers = inits;
  g->initializer_count = n_init;
  g->inputs = inputs;
  g->input_count = n_in;
  g->outputs = outputs;
  g->output_count = n_out;
  g->value_infos = vis;
  g->value_info_count = n_vi;
  return ETRT_OK;
}

etrt_status etrt_onnx_parse_model_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c) {
  etrt_onnx_model *m = p->model;
  m->producer_name = m->producer_version = etrt_onnx_no_str;
  size_t n_opset = 0, n_func = 0;
  int has_graph = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        etrt_onnx_path_push(p, ".ir_version");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &f, &m->ir_version));
        break;
      case 2:
        etrt_onnx_path_push(p, ".producer_name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &m->producer_name));
        break;
      case 3:
        etrt_onnx_path_push(p, ".producer_version");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &m->producer_version));
        break;
      case 7:
        etrt_onnx_path_push(p, ".graph");
        ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &f, has_graph ? "" : NULL, "graph"));
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        has_graph = 1;
        break;
      case 8:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "opset_import", &n_opset));
        break;
      case 25:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "functions", &n_func));
        break;
      default:
        break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  if (!has_graph) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, c->end, "the model has no graph");
  }
  etrt_onnx_opset *opsets;
  etrt_onnx_str *domains, *names;
  etrt_onnx_graph *graph;
  ETRT_ONNX_ALLOC(p, opsets, n_opset);
  ETRT_ONNX_ALLOC(p, domains, n_func);
  ETRT_ONNX_ALLOC(p, names, n_func);
  ETRT_ONNX_ALLOC(p, graph, 1);
  size_t no = 0, nf = 0;
  ETRT_ONNX_FOR_FIELDS(p, c, f, {
    size_t mark = p->path_len;
    if (f.number == 7) {
      etrt_onnx_path_push(p, ".graph");
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_graph(p, c, &f, graph));
    } else if (f.number == 8) {
      etrt_onnx_path_push(p, ".opset_import[%zu]", no);
      etrt_onnx_opset *o = &opsets[no++];
      o->domain = etrt_onnx_no_str;
      etrt_pb_cursor oc;
      ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(c, &f, &oc));
      etrt_pb_field g;
      ETRT_ONNX_FOR_FIELDS(p, &oc, g, {
        if (g.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &o->domain));
        if (g.number == 2) ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &g, &o->version));
      });
    } else if (f.number == 25) {
      etrt_onnx_path_push(p, ".functions[%zu]", nf);
      domains[nf] = names[nf] = etrt_onnx_no_str;
      etrt_pb_cursor fc;
      ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(c, &f, &fc));
      etrt_pb_field g;
      ETRT_ONNX_FOR_FIELDS(p, &fc, g, {
        if (g.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &names[nf]));
        if (g.number == 10) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &domains[nf]));
      });
      ++nf;
    }
    etrt_onnx_path_pop(p, mark);
  });
  m->opsets = opsets;
  m->opset_count = n_opset;
  m->function_domains = domains;
  m->function_names = names;
  m->function_count = n_func;
  m->graph = graph;
  return ETRT_OK;
}
