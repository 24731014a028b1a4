/* External tensors: a program's EXTERNAL tensors (and named data not in the .pte)
 * come from a .ptd file given at load, keyed by fully qualified name. */
#include <string.h>

#include "base/status.h"
#include "runtime/program.h"

etrt_status etrt_program_open_data(etrt_program *program, const char *path) {
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &program->data_file));
  etrt_status status = etrt_ptd_parse(program->data_file.data, program->data_file.size, &program->data);
  if (status != ETRT_OK) return etrt_error_context(status, "data file '%s': ", path);
  return ETRT_OK;
}

void etrt_program_close_data(etrt_program *program) {
  etrt_ptd_file_free(program->data);
  program->data = NULL;
  etrt_file_map_close(&program->data_file);
}

etrt_status etrt_program_external_tensor(const etrt_program *program, const char *key, size_t nbytes,
                                         const uint8_t **out) {
  *out = NULL;
  if (program->data == NULL) {
    return etrt_error(ETRT_ERROR_NOT_FOUND,
                      "tensor '%s' is external: load the program with its .ptd data file (--data FILE.ptd)", key);
  }
  const etrt_ptd_entry *entry;
  ETRT_RETURN_IF_ERROR(etrt_ptd_find(program->data, key, &entry));
  if (entry->data.size < nbytes) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "external tensor '%s' has %zu bytes in the data file, needs %zu", key,
                      entry->data.size, nbytes);
  }
  *out = entry->data.data;
  return ETRT_OK;
}
