/* ValueInfoProto messages: names, types (tensor, sparse tensor, or the kinds the
 * importer refuses) and shapes. */
#ifndef ETRT_BUILDER_ONNX_VALUE_INFO_H
#define ETRT_BUILDER_ONNX_VALUE_INFO_H

#include "builder/onnx_parse.h"

etrt_status etrt_onnx_parse_value_info(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                       const etrt_pb_field *field, etrt_onnx_value_info *vi);

#endif
