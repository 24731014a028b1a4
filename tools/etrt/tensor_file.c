#include "tensor_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/npy.h"
#include "base/status.h"
#include "builder/tensor_pb.h"
#include "builder/value_pb.h"

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
    out->from_pb = 1;
    pb.data = NULL; /* ownership moves to `out` */
    etrt_tensor_pb_release(&pb);
    return ETRT_OK;
  }
  return etrt_npy_read_file(path, &out->view, &out->nbytes);
}

void etrt_tool_tensor_relabel(etrt_tool_tensor *t, etrt_dtype want) {
  if (t->from_pb && t->view.dtype == ETRT_DTYPE_UINT16 &&
      (want == ETRT_DTYPE_BFLOAT16 || want == ETRT_DTYPE_FLOAT16))
    t->view.dtype = want;
}

static etrt_status etrt_tool_values_full(const char *path, uint32_t max) {
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "'%s': more than %u tensors in all", path, max);
}

/* A .pb file's tensors: one for a TensorProto, the elements of a sequence, the value of
 * an optional. */
static etrt_status etrt_tool_values_pb(const char *path, etrt_tool_tensor *out, uint32_t max,
                                       uint32_t *count) {
  etrt_value_pb v;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_read_file(path, &v));
  if (*count + v.count > max) {
    etrt_value_pb_release(&v);
    return etrt_tool_values_full(path, max);
  }
  for (uint32_t i = 0; i < v.count; ++i) {
    etrt_tool_tensor *t = &out[(*count)++];
    memset(t, 0, sizeof *t);
    t->view.data = v.tensors[i].data;
    t->view.dtype = v.tensors[i].dtype;
    t->view.rank = v.tensors[i].rank;
    memcpy(t->view.sizes, v.tensors[i].sizes, sizeof t->view.sizes);
    t->nbytes = v.tensors[i].nbytes;
    t->from_pb = 1;
    v.tensors[i].data = NULL; /* ownership moves to `out` */
  }
  etrt_value_pb_release(&v);
  return ETRT_OK;
}

etrt_status etrt_tool_values_read(const char *path, etrt_tool_tensor *out, uint32_t max,
                                  uint32_t *count) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    for (uint32_t i = 0;; ++i) {
      char file[4096];
      struct stat fs;
      snprintf(file, sizeof file, "%s/%u.npy", path, i);
      if (stat(file, &fs) != 0) snprintf(file, sizeof file, "%s/%u.pb", path, i);
      if (stat(file, &fs) != 0) return ETRT_OK;
      if (*count == max) return etrt_tool_values_full(path, max);
      ETRT_RETURN_IF_ERROR(etrt_tool_tensor_read(file, &out[*count]));
      ++*count;
    }
  }
  if (etrt_tool_ends_with(path, ".pb")) return etrt_tool_values_pb(path, out, max, count);
  if (*count == max) return etrt_tool_values_full(path, max);
  ETRT_RETURN_IF_ERROR(etrt_tool_tensor_read(path, &out[*count]));
  ++*count;
  return ETRT_OK;
}

etrt_status etrt_tool_tensor_write(const char *path, const etrt_tensor_view *view) {
  if (etrt_tool_ends_with(path, ".pb")) return etrt_tensor_pb_write_file(path, NULL, view);
  return etrt_npy_write_file(path, view);
}

void etrt_tool_tensor_release(etrt_tool_tensor *tensor) {
  free(tensor->view.data);
  memset(tensor, 0, sizeof *tensor);
}
