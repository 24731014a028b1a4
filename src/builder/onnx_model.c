/* The ONNX reader's entry points: parsing bytes or a file into a model, the
 * model's accessors and opset lookup. The messages are read by onnx_graph.c and the
 * files it uses. */
#include "builder/onnx_model.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/file.h"
#include "base/status.h"
#include "builder/onnx_graph.h"
#include "builder/onnx_parse.h"
#include "builder/onnx_tensor_proto.h"
#include "builder/protobuf.h"

/* --- public entry points --------------------------------------------------------------- */

static etrt_status etrt_onnx_model_new(etrt_onnx_model **out) {
  *out = calloc(1, sizeof **out);
  if (*out != NULL) (*out)->arena = etrt_arena_create();
  if (*out == NULL || (*out)->arena == NULL) {
    free(*out);
    *out = NULL;
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for an ONNX model");
  }
  return ETRT_OK;
}

static void etrt_onnx_parser_init(etrt_onnx_parser *p, etrt_onnx_model *m, const char *base_dir,
                                  const char *root) {
  p->model = m;
  p->base_dir = base_dir;
  p->graph_depth = 0;
  p->path_len = 0;
  p->path[0] = '\0';
  etrt_onnx_path_push(p, "%s", root);
}

etrt_status etrt_onnx_model_parse(const uint8_t *data, size_t size, const char *base_dir,
                                  etrt_onnx_model **out) {
  *out = NULL;
  if (data == NULL && size != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "ONNX model: NULL data");
  }
  static const uint8_t nothing[1] = {0};
  etrt_onnx_model *m;
  ETRT_RETURN_IF_ERROR(etrt_onnx_model_new(&m));
  etrt_onnx_parser p;
  etrt_onnx_parser_init(&p, m, base_dir, "ModelProto");
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data ? data : nothing, size);
  etrt_status s = etrt_onnx_parse_model_cursor(&p, &c);
  if (s != ETRT_OK) {
    etrt_onnx_model_free(m);
    return s;
  }
  *out = m;
  return ETRT_OK;
}

etrt_status etrt_onnx_model_load_file(const char *path, etrt_onnx_model **out) {
  *out = NULL;
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  /* External data lives next to the model: its folder is the path up to the last '/'. */
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  if (slash == NULL) {
    dir = strdup(".");
  } else {
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    dir = strndup(path, n);
  }
  if (dir == NULL) {
    etrt_file_map_close(&map);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  }
  etrt_status s = etrt_onnx_model_parse(map.data, map.size, dir, out);
  free(dir);
  if (s != ETRT_OK) {
    etrt_file_map_close(&map);
    return etrt_error_context(s, "'%s': ", path);
  }
  (*out)->file = map;
  return ETRT_OK;
}

void etrt_onnx_model_free(etrt_onnx_model *model) {
  if (model == NULL) return;
  etrt_arena_destroy(model->arena);
  for (size_t i = 0; i < model->external_count; ++i) {
    etrt_file_map_close(&model->externals[i].map);
    free(model->externals[i].location);
  }
  free(model->externals);
  etrt_file_map_close(&model->file);
  free(model);
}

etrt_status etrt_onnx_tensor_parse(const uint8_t *data, size_t size, const char *what,
                                   etrt_onnx_model **holder, const etrt_onnx_tensor **tensor) {
  *holder = NULL;
  *tensor = NULL;
  if (data == NULL && size != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "TensorProto: NULL data");
  }
  static const uint8_t nothing[1] = {0};
  etrt_onnx_model *m;
  ETRT_RETURN_IF_ERROR(etrt_onnx_model_new(&m));
  etrt_onnx_parser p;
  etrt_onnx_parser_init(&p, m, NULL, "TensorProto");
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data ? data : nothing, size);
  etrt_onnx_tensor *t;
  etrt_status s = ETRT_OK;
  t = etrt_onnx_alloc(&p, 1, sizeof *t, &s);
  if (s == ETRT_OK) s = etrt_onnx_parse_tensor_cursor(&p, &c, 0, t);
  if (s != ETRT_OK) {
    etrt_onnx_model_free(m);
    return what != NULL ? etrt_error_context(s, "'%s': ", what) : s;
  }
  *holder = m;
  *tensor = t;
  return ETRT_OK;
}

const etrt_onnx_graph *etrt_onnx_model_graph(const etrt_onnx_model *model) { return model->graph; }
int64_t etrt_onnx_model_ir_version(const etrt_onnx_model *model) { return model->ir_version; }
etrt_onnx_str etrt_onnx_model_producer_name(const etrt_onnx_model *model) {
  return model->producer_name;
}
etrt_onnx_str etrt_onnx_model_producer_version(const etrt_onnx_model *model) {
  return model->producer_version;
}
size_t etrt_onnx_model_opset_count(const etrt_onnx_model *model) { return model->opset_count; }
const etrt_onnx_opset *etrt_onnx_model_opsets(const etrt_onnx_model *model) {
  return model->opsets;
}

static int etrt_onnx_is_default_domain(etrt_onnx_str domain) {
  return domain.size == 0 || etrt_onnx_str_eq(domain, "ai.onnx");
}

int64_t etrt_onnx_model_opset(const etrt_onnx_model *model, const char *domain) {
  etrt_onnx_str want = {domain, strlen(domain)};
  int want_default = etrt_onnx_is_default_domain(want);
  for (size_t i = 0; i < model->opset_count; ++i) {
    etrt_onnx_str d = model->opsets[i].domain;
    if (want_default ? etrt_onnx_is_default_domain(d) : etrt_onnx_str_eq(d, domain)) {
      return model->opsets[i].version;
    }
  }
  return -1;
}

size_t etrt_onnx_model_function_count(const etrt_onnx_model *model) {
  return model->function_count;
}

void etrt_onnx_model_function(const etrt_onnx_model *model, size_t index, etrt_onnx_str *domain,
                              etrt_onnx_str *name) {
  *domain = index < model->function_count ? model->function_domains[index] : etrt_onnx_no_str;
  *name = index < model->function_count ? model->function_names[index] : etrt_onnx_no_str;
}
