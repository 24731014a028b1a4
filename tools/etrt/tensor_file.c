#include "tensor_file.h"

#include <stdlib.h>
#include <string.h>

#include "base/npy.h"
#include "base/status.h"
#include "builder/tensor_pb.h"

static int etrt_tool_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

etrt_status etrt_tool_tensor_read(const char *path, etrt_tool_tensor *out) {
  memset(out, 0, sizeof *out);
  if (etrt_tool_ends_with(path, ".pb")) {
    etrt_tensor_pb pb;
    ETRT_RETURN_IF_ERROR(etrt_tensor_pb_read_file(path, &pb));
    out->view.data = pb.data;
    out->view.dtype = pb.dtype;
    out->view.rank = pb.rank;
    memcpy(out->view.sizes, pb.sizes, sizeof out->view.sizes);
    out->nbytes = pb.nbytes;
    pb.data = NULL; /* ownership moves to `out` */
    etrt_tensor_pb_release(&pb);
    return ETRT_OK;
  }
  return etrt_npy_read_file(path, &out->view, &out->nbytes);
}

etrt_status etrt_tool_tensor_read_for(const char *path, etrt_dtype want, etrt_tool_tensor *out) {
  ETRT_RETURN_IF_ERROR(etrt_tool_tensor_read(path, out));
  if (etrt_tool_ends_with(path, ".pb") && out->view.dtype == ETRT_DTYPE_UINT16 &&
      (want == ETRT_DTYPE_BFLOAT16 || want == ETRT_DTYPE_FLOAT16))
    out->view.dtype = want;
  return ETRT_OK;
}

etrt_status etrt_tool_tensor_write_npy(const char *path, const etrt_tensor_view *view) {
  return etrt_npy_write_file(path, view);
}

void etrt_tool_tensor_release(etrt_tool_tensor *tensor) {
  free(tensor->view.data);
  memset(tensor, 0, sizeof *tensor);
}
