/* TensorProto messages: dims, element type, values in typed fields, raw_data or
 * external data, checked against each other (onnx_tensor.h declares the result). */
#ifndef ETRT_BUILDER_ONNX_TENSOR_PROTO_H
#define ETRT_BUILDER_ONNX_TENSOR_PROTO_H

#include "builder/onnx_parse.h"

etrt_status etrt_onnx_parse_tensor_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c, size_t offset,
                                          etrt_onnx_tensor *t);
etrt_status etrt_onnx_parse_tensor(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                   const etrt_pb_field *field, etrt_onnx_tensor *t);

#endif
