/* The JSON object `etrt inspect --json` prints: the contract other tools read.
 *
 * {"file_identifier", "extended_header": {program_size, segment_base_offset,
 *  segment_data_size} | null, "version", "segments": [{offset, size}],
 *  "named_data": [{key, segment_index}], "methods": [{name, num_values, inputs,
 *  outputs, input_tensors, output_tensors, tensors, operators, instructions,
 *  delegates, non_const_buffer_sizes, non_const_buffer_device}]}
 *
 * input_tensors / output_tensors run parallel to inputs / outputs: {dtype, sizes,
 * device} for a tensor value, null for any other value; a tensor whose shape may
 * change at run time adds "dynamic": "bound" (sizes are then the upper bound) or
 * "unbound" (sizes mean nothing). tensors lists every tensor
 * value with its index. operators are "ns::name.overload" strings. instructions
 * are {"kind":"kernel","op":"<operator>","op_index":i,"args":[...]},
 * {"kind":"delegate","delegate":i,"args":[...]}, or {"kind":"move"|"jump_false"|
 * "free"}. delegates: {id, location "inline"|"segment", index, size,
 * peak_device_memory (etrt plans only; bytes: {total, weights, intermediates,
 * workspace, null in a build without CUDA}), compile_specs:
 * {key: UTF-8 text, or "hex:..." when the value is not printable text}}.
 * non_const_buffer_device: [{buffer_idx, device}]. dtype names come from
 * etrt_dtype_name, devices are "cpu" or "cuda:N". */
#ifndef ETRT_PTE_PTE_JSON_H
#define ETRT_PTE_PTE_JSON_H

#include <stddef.h>

#include "pte/pte.h"

/* Renders the object (one line, no trailing newline) into a malloc'd,
 * NUL-terminated string; the caller frees it. */
etrt_status etrt_pte_json(const etrt_pte_program *program, char **out, size_t *out_size);

#endif
