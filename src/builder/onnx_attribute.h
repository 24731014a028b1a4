/* AttributeProto messages (a missing type is inferred from the one value field
 * given); the attribute accessors of onnx_model.h live beside the parser. */
#ifndef ETRT_BUILDER_ONNX_ATTRIBUTE_H
#define ETRT_BUILDER_ONNX_ATTRIBUTE_H

#include "builder/onnx_parse.h"

etrt_status etrt_onnx_parse_attribute(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                      const etrt_pb_field *field, etrt_onnx_attribute *a);

#endif
