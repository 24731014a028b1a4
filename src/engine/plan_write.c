/* etrt_plan_build: a network serialized in the layout of plan_format.h. The output
 * depends only on the network and the options (no addresses, times or padding
 * garbage), so that one network always gives the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/digest.h"
#include "base/status.h"
#include "engine/network.h"
#include "engine/plan_format.h"

typedef struct etrt_plan_writer {
  uint8_t *data;
  size_t size, capacity;
  int failed; /* out of memory: every later put is dropped, checked once at the end */
} etrt_plan_writer;

static uint8_t *etrt_plan_put(etrt_plan_writer *w, size_t n) {
  if (w->failed) return NULL;
  size_t need;
  if (etrt_add_overflow_size(w->size, n, &need)) {
    w->failed = 1;
    return NULL;
  }
  if (need > w->capacity) {
    size_t capacity = w->capacity < 4096 ? 4096 : w->capacity;
    while (capacity < need) {
      if (capacity > SIZE_MAX / 2) {
        capacity = need;
        break;
      }
      capacity *= 2;
    }
    uint8_t *p = realloc(w->data, capacity);
    if (p == NULL) {
      w->failed = 1;
      return NULL;
    }
    w->data = p;
    w->capacity = capacity;
  }
  uint8_t *at = w->data + w->size;
  memset(at, 0, n);
  w->size = need;
  return at;
}

static void etrt_plan_put_u8(etrt_plan_writer *w, uint8_t v) {
  uint8_t *p = etrt_plan_put(w, 1);
  if (p != NULL) *p = v;
}
static void etrt_plan_put_u16(etrt_plan_writer *w, uint16_t v) {
  uint8_t *p = etrt_plan_put(w, 2);
  if (p != NULL) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
  }
}
static void etrt_plan_put_u32(etrt_plan_writer *w, uint32_t v) {
  uint8_t *p = etrt_plan_put(w, 4);
  if (p != NULL) etrt_plan_store_u32(p, v);
}
static void etrt_plan_put_u64(etrt_plan_writer *w, uint64_t v) {
  uint8_t *p = etrt_plan_put(w, 8);
  if (p != NULL) etrt_plan_store_u64(p, v);
}
static void etrt_plan_put_i64(etrt_plan_writer *w, int64_t v) { etrt_plan_put_u64(w, (uint64_t)v); }
static void etrt_plan_put_f32(etrt_plan_writer *w, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  etrt_plan_put_u32(w, bits);
}
static void etrt_plan_put_bytes(etrt_plan_writer *w, const void *data, size_t n) {
  uint8_t *p = etrt_plan_put(w, n);
  if (p != NULL && n > 0) memcpy(p, data, n);
}
static void etrt_plan_put_pad(etrt_plan_writer *w, size_t alignment) {
  etrt_plan_put(w, etrt_align_up(w->size, alignment) - w->size);
}

static etrt_status etrt_plan_put_string(etrt_plan_writer *w, const char *s, const char *what) {
  size_t n = strlen(s);
  if (n > ETRT_PLAN_MAX_STRING)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: %s is %zu bytes long, at most %u", what,
                      n, ETRT_PLAN_MAX_STRING);
  etrt_plan_put_u32(w, (uint32_t)n);
  etrt_plan_put_bytes(w, s, n);
  return ETRT_OK;
}

static void etrt_plan_put_dims(etrt_plan_writer *w, int32_t rank, const int64_t *dims) {
  for (int32_t i = 0; i < rank; ++i) etrt_plan_put_i64(w, dims[i]);
}

static etrt_status etrt_plan_put_attribute(etrt_plan_writer *w, const etrt_attribute *a) {
  ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, a->name, "an attribute name"));
  etrt_plan_put_u32(w, (uint32_t)a->kind);
  switch (a->kind) {
    case ETRT_ATTRIBUTE_INT:
      etrt_plan_put_i64(w, a->i);
      break;
    case ETRT_ATTRIBUTE_FLOAT:
      etrt_plan_put_f32(w, a->f);
      break;
    case ETRT_ATTRIBUTE_STRING:
      ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, a->s, "a string attribute"));
      break;
    case ETRT_ATTRIBUTE_INTS:
    case ETRT_ATTRIBUTE_FLOATS:
      if (a->count > (int64_t)UINT32_MAX)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: attribute '%s' has too many values",
                          a->name);
      etrt_plan_put_u32(w, (uint32_t)a->count);
      for (int64_t i = 0; i < a->count; ++i) {
        if (a->kind == ETRT_ATTRIBUTE_INTS)
          etrt_plan_put_i64(w, a->ints[i]);
        else
          etrt_plan_put_f32(w, a->floats[i]);
      }
      break;
    case ETRT_ATTRIBUTE_TENSOR:
    case ETRT_ATTRIBUTE_GRAPH: {
      const etrt_tensor_view *t = &a->tensor;
      int64_t n = etrt_graph_nbytes(t->dtype, t->rank, t->sizes);
      etrt_plan_put_u32(w, (uint32_t)t->dtype);
      etrt_plan_put_u32(w, (uint32_t)t->rank);
      etrt_plan_put_dims(w, t->rank, t->sizes);
      etrt_plan_put_u64(w, (uint64_t)n);
      etrt_plan_put_bytes(w, t->data, (size_t)n);
      break;
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_plan_write_body(etrt_plan_writer *w, const etrt_graph *g,
                                        size_t *weights_patch) {
  etrt_plan_put_u32(w, etrt_graph_io_count(g));
  etrt_plan_put_u32(w, g->value_count);
  etrt_plan_put_u32(w, g->node_count);
  etrt_plan_put_u32(w, 0);
  *weights_patch = w->size;
  etrt_plan_put_u64(w, 0); /* weights offset, patched */
  etrt_plan_put_u64(w, 0); /* weights size, patched */
  uint64_t weights = 0;
  for (uint32_t v = 0; v < g->value_count; ++v) {
    const etrt_graph_value *value = &g->values[v];
    ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, value->name, "a value name"));
    etrt_plan_put_u8(w, (uint8_t)value->kind);
    etrt_plan_put_u8(w, value->is_shape_input ? ETRT_PLAN_VALUE_SHAPE_INPUT : 0);
    etrt_plan_put_u16(w, 0);
    etrt_plan_put_u32(w, (uint32_t)value->dtype);
    etrt_plan_put_u32(w, (uint32_t)value->rank);
    etrt_plan_put_dims(w, value->rank, value->min_dims);
    etrt_plan_put_dims(w, value->rank, value->max_dims);
    if (value->kind == ETRT_VALUE_KIND_CONSTANT) {
      etrt_plan_put_u64(w, weights);
      etrt_plan_put_u64(w, value->nbytes);
      weights = etrt_align_up(weights + value->nbytes, ETRT_PLAN_WEIGHT_ALIGNMENT);
    }
    if (value->is_shape_input) {
      int64_t n = etrt_graph_shape_input_count(value);
      for (int64_t i = 0; i < n; ++i) etrt_plan_put_i64(w, value->min_values[i]);
      for (int64_t i = 0; i < n; ++i) etrt_plan_put_i64(w, value->max_values[i]);
    }
  }
  for (uint32_t io = 0; io < etrt_graph_io_count(g); ++io) {
    int32_t id = etrt_graph_io_value(g, io);
    const etrt_graph_value *value = &g->values[id];
    etrt_plan_put_u32(w, (uint32_t)id);
    etrt_plan_put_u8(w, io < g->input_count);
    etrt_plan_put_u8(w, value->is_shape_input != 0);
    etrt_plan_put_u16(w, 0);
    ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, value->name, "an I/O name"));
    etrt_plan_put_u32(w, (uint32_t)value->dtype);
    etrt_plan_put_u32(w, (uint32_t)value->rank);
    etrt_plan_put_dims(w, value->rank, value->min_dims);
    etrt_plan_put_dims(w, value->rank, value->max_dims);
  }
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, node->op_type, "an op type"));
    ETRT_RETURN_IF_ERROR(etrt_plan_put_string(w, node->name, "a node name"));
    etrt_plan_put_u32(w, node->num_inputs);
    for (uint32_t i = 0; i < node->num_inputs; ++i) etrt_plan_put_u32(w, (uint32_t)node->inputs[i]);
    etrt_plan_put_u32(w, node->num_outputs);
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      etrt_plan_put_u32(w, (uint32_t)node->outputs[o]);
    etrt_plan_put_u32(w, node->num_attributes);
    for (uint32_t a = 0; a < node->num_attributes; ++a)
      ETRT_RETURN_IF_ERROR(etrt_plan_put_attribute(w, &node->attributes[a]));
  }
  etrt_plan_put_pad(w, ETRT_PLAN_WEIGHT_ALIGNMENT);
  size_t weights_offset = w->size;
  for (uint32_t v = 0; v < g->value_count; ++v) {
    const etrt_graph_value *value = &g->values[v];
    if (value->kind != ETRT_VALUE_KIND_CONSTANT) continue;
    etrt_plan_put_bytes(w, value->data, value->nbytes);
    etrt_plan_put_pad(w, ETRT_PLAN_WEIGHT_ALIGNMENT);
  }
  if (!w->failed) {
    etrt_plan_store_u64(w->data + *weights_patch, weights_offset);
    etrt_plan_store_u64(w->data + *weights_patch + 8, w->size - weights_offset);
  }
  return ETRT_OK;
}

etrt_status etrt_plan_build(const etrt_network *network, const etrt_plan_options *options,
                            uint8_t **plan, size_t *plan_size) {
  if (network == NULL || options == NULL || plan == NULL || plan_size == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: NULL argument");
  const etrt_graph *g = etrt_network_graph(network);
  const char *name = options->name != NULL ? options->name : "engine";
  if (strlen(name) >= ETRT_PLAN_NAME_SIZE)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: engine name '%s' is longer than %u bytes",
                      name, ETRT_PLAN_NAME_SIZE - 1);
  if (g->output_count == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: the network has no outputs (mark one)");
  etrt_device device = options->device;
  if (!((device.type == ETRT_DEVICE_CPU && device.index == 0) ||
        (device.type == ETRT_DEVICE_CUDA && device.index >= 0 &&
         device.index <= ETRT_PLAN_MAX_DEVICE_INDEX)))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "plan: device type %d index %d is not cpu or cuda:N", (int)device.type,
                      (int)device.index);
  if ((unsigned)options->precision > ETRT_PRECISION_BF16)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: unknown precision %d",
                      (int)options->precision);
  int major = 0, minor = 0;
  if (device.type == ETRT_DEVICE_CUDA) {
    if (options->compute_major < 0 || options->compute_minor < 0 || options->compute_major > 99 ||
        options->compute_minor > 99)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: compute capability %d.%d",
                        options->compute_major, options->compute_minor);
    major = options->compute_major > 0 ? options->compute_major : 9;
    minor = options->compute_major > 0 ? options->compute_minor : 0;
  }

  etrt_plan_writer w = {0};
  etrt_plan_put(&w, ETRT_PLAN_HEADER_SIZE);
  size_t weights_patch = 0;
  etrt_status s = etrt_plan_write_body(&w, g, &weights_patch);
  if (s == ETRT_OK && w.failed)
    s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory writing %zu bytes", w.size);
  if (s != ETRT_OK) {
    free(w.data);
    return s;
  }
  uint8_t *h = w.data;
  memcpy(h, ETRT_PLAN_MAGIC, 8);
  etrt_plan_store_u32(h + 8, ETRT_PLAN_VERSION);
  etrt_plan_store_u32(h + 12, ETRT_PLAN_HEADER_SIZE);
  etrt_plan_store_u32(h + 16, (uint32_t)device.type);
  etrt_plan_store_u32(h + 20, (uint32_t)device.index);
  etrt_plan_store_u32(h + 24, (uint32_t)major);
  etrt_plan_store_u32(h + 28, (uint32_t)minor);
  etrt_plan_store_u32(h + 32, (uint32_t)options->precision);
  etrt_plan_store_u32(h + 36, 0);
  etrt_plan_store_u64(h + 40, w.size - ETRT_PLAN_HEADER_SIZE);
  etrt_sha256(h + ETRT_PLAN_HEADER_SIZE, w.size - ETRT_PLAN_HEADER_SIZE, h + 48);
  memcpy(h + ETRT_PLAN_NAME_OFFSET, name, strlen(name));
  *plan = w.data;
  *plan_size = w.size;
  return ETRT_OK;
}

etrt_status etrt_plan_tuning_attach(const uint8_t *plan, size_t size,
                                    const etrt_plan_tuning *tuning, uint8_t **out,
                                    size_t *out_size) {
  if (plan == NULL || tuning == NULL || out == NULL || out_size == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: NULL argument");
  size_t body = ETRT_PLAN_HEADER_SIZE;
  if (size < body + ETRT_PLAN_BODY_HEADER_SIZE || memcmp(plan, ETRT_PLAN_MAGIC, 8) != 0 ||
      etrt_plan_load_u32(plan + 16) != ETRT_DEVICE_CUDA || etrt_plan_load_u32(plan + 36) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "plan: a tuning record goes on a cuda plan without one");
  uint64_t weights_offset = etrt_plan_load_u64(plan + body + 16);
  if (weights_offset > size || weights_offset % ETRT_PLAN_WEIGHT_ALIGNMENT != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: weights offset %llu out of range",
                      (unsigned long long)weights_offset);
  size_t name_length = strlen(tuning->gpu);
  if (name_length == 0 || name_length > ETRT_PLAN_TUNING_NAME_MAX)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: tuning GPU name of %zu bytes",
                      name_length);
  etrt_plan_writer w = {0};
  etrt_plan_put_bytes(&w, plan, (size_t)weights_offset);
  (void)etrt_plan_put_string(&w, tuning->gpu, "a GPU name"); /* at most 255 bytes */
  etrt_plan_put_u32(&w, (uint32_t)tuning->compute_major);
  etrt_plan_put_u32(&w, (uint32_t)tuning->compute_minor);
  etrt_plan_put_u32(&w, tuning->cudnn_version);
  etrt_plan_put_u32(&w, tuning->count);
  for (uint32_t i = 0; i < tuning->count; ++i) {
    const etrt_plan_conv_choice *c = &tuning->choices[i];
    etrt_plan_put_u32(&w, c->node);
    etrt_plan_put_u32(&w, c->algorithm);
    etrt_plan_put_u32(&w, c->math);
    etrt_plan_put_u32(&w, 0);
    etrt_plan_put_u64(&w, c->scratch_bytes);
  }
  etrt_plan_put_pad(&w, ETRT_PLAN_WEIGHT_ALIGNMENT);
  size_t new_weights = w.size;
  etrt_plan_put_bytes(&w, plan + weights_offset, size - (size_t)weights_offset);
  if (w.failed) {
    free(w.data);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory writing %zu bytes", w.size);
  }
  uint8_t *h = w.data;
  etrt_plan_store_u32(h + 36, ETRT_PLAN_FLAG_TUNED);
  etrt_plan_store_u64(h + body + 16, new_weights);
  etrt_plan_store_u64(h + 40, w.size - ETRT_PLAN_HEADER_SIZE);
  etrt_sha256(h + ETRT_PLAN_HEADER_SIZE, w.size - ETRT_PLAN_HEADER_SIZE, h + 48);
  *out = w.data;
  *out_size = w.size;
  return ETRT_OK;
}
