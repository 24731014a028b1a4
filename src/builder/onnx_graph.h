/* The message walk of ModelProto, GraphProto and NodeProto: counts, then arrays of
 * nodes, initializers, inputs, outputs, value infos, opset imports and function
 * names. */
#ifndef ETRT_BUILDER_ONNX_GRAPH_H
#define ETRT_BUILDER_ONNX_GRAPH_H

#include "builder/onnx_parse.h"

etrt_status etrt_onnx_parse_graph(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                  const etrt_pb_field *field, etrt_onnx_graph *g);
etrt_status etrt_onnx_parse_model_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c);

#endif
