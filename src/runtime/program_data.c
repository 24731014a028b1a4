/* External tensors: a program's EXTERNAL tensors come from a .ptd file given at
 * load, or from the program's own named data, keyed by fully qualified name. */
#include <string.h>

#include "base/status.h"
#include "runtime/program.h"

etrt_status etrt_program_open_data(etrt_program *program, const char *path) {
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &program->data_file));
  etrt_status status =
      etrt_ptd_parse(program->data_file.data, program->data_file.size, &program->data);
  if (status != ETRT_OK) return etrt_error_context(status, "data file '%s': ", path);
  return ETRT_OK;
}

void etrt_program_close_data(etrt_program *program) {
  etrt_ptd_file_free(program->data);
  program->data = NULL;
  etrt_file_map_close(&program->data_file);
}

/* Contract (ExecuTorch's tensor parser): an EXTERNAL tensor is found by its fully
 * qualified name, first in the .ptd given at load, then in the program's own named
 * data; its data_buffer_idx plays no part (writers leave nonzero indices there).
 * The entry must hold exactly the tensor's bytes, and its dtype must match where
 * the .ptd records one. */
etrt_status etrt_program_external_tensor(const etrt_program *program, const char *key,
                                         etrt_dtype dtype, size_t nbytes, const uint8_t **out) {
  *out = NULL;
  const etrt_ptd_entry *entry = NULL;
  if (program->data != NULL && etrt_ptd_find(program->data, key, &entry) != ETRT_OK) entry = NULL;
  etrt_pte_bytes bytes;
  const char *where;
  if (entry != NULL) {
    if (entry->has_layout && entry->layout.scalar_type != dtype) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "external tensor '%s' is %s in the data file, but the program declares it %s", key,
          etrt_dtype_name(entry->layout.scalar_type), etrt_dtype_name(dtype));
    }
    bytes = entry->data;
    where = "the data file";
  } else {
    /* Named data indices are checked at parse, so NOT_FOUND here means no such key. */
    etrt_status st = etrt_pte_program_named_data(program->pte, key, &bytes);
    if (st == ETRT_ERROR_NOT_FOUND && program->data == NULL) {
      return etrt_error(
          ETRT_ERROR_NOT_FOUND,
          "tensor '%s' is external and the program's named data does not hold it: load the "
          "program with its .ptd data file (--data FILE.ptd)",
          key);
    }
    if (st == ETRT_ERROR_NOT_FOUND) {
      return etrt_error(
          ETRT_ERROR_NOT_FOUND,
          "external tensor '%s' is neither in the data file nor in the program's named data", key);
    }
    ETRT_RETURN_IF_ERROR(st);
    where = "the program's named data";
  }
  if (bytes.size != nbytes) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "external tensor '%s' has %zu bytes in %s, the tensor needs %zu", key,
                      bytes.size, where, nbytes);
  }
  *out = bytes.data;
  return ETRT_OK;
}
