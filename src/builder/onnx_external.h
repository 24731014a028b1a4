/* External data of ONNX tensors: the external_data key/value entries and the files
 * they name, which must lie inside the model's folder (checked by spelling, then after
 * resolving links) and are mapped once per model. */
#ifndef ETRT_BUILDER_ONNX_EXTERNAL_H
#define ETRT_BUILDER_ONNX_EXTERNAL_H

#include "builder/onnx_parse.h"

etrt_status etrt_onnx_parse_string_entry(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                         const etrt_pb_field *field, etrt_onnx_str *key,
                                         etrt_onnx_str *value);
etrt_status etrt_onnx_parse_decimal(etrt_onnx_parser *p, etrt_onnx_str text, size_t offset,
                                    const char *key, uint64_t *out);
etrt_status etrt_onnx_resolve_external(etrt_onnx_parser *p, etrt_onnx_tensor *t, int has_length);

#endif
