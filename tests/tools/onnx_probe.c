/* Prints what the ONNX reader makes of models and .pb tensor files, one fact a line,
 * so that tests/python/test_onnx_reader.py can compare it with what the onnx package
 * reads from the same files.
 *
 *   etrt_onnx_probe FILE...            model.onnx or tensor .pb files (by extension)
 *   etrt_onnx_probe --write IN OUT     read the tensor IN.pb, write it back as OUT.pb
 *
 * Strings are printed with every byte outside [A-Za-z0-9_.:/-] as %XX; floats as
 * their bits in hex; tensor values as the SHA-256 of the host bytes. */
#include <stdio.h>
#include <string.h>

#include "base/digest.h"
#include "builder/onnx_model.h"
#include "builder/tensor_pb.h"

static void put_escaped(const char *data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = (unsigned char)data[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        (c != 0 && strchr("_.:/-", c) != NULL)) {
      putchar(c);
    } else {
      printf("%%%02X", c);
    }
  }
}

static void put_str(etrt_onnx_str s) {
  putchar('\'');
  put_escaped(s.data, s.size);
  putchar('\'');
}

static void put_sha(const void *data, size_t size) {
  uint8_t d[ETRT_DIGEST_SIZE];
  etrt_sha256(data, size, d);
  for (int i = 0; i < ETRT_DIGEST_SIZE; ++i) printf("%02x", d[i]);
}

static void indent(int depth) {
  for (int i = 0; i < depth; ++i) fputs("  ", stdout);
}

static void put_tensor(const etrt_onnx_tensor *t, int depth) {
  indent(depth);
  fputs("tensor ", stdout);
  put_str(t->name);
  printf(" type=%d dims=[", (int)t->data_type);
  for (size_t i = 0; i < t->rank; ++i) printf("%s%lld", i ? "," : "", (long long)t->dims[i]);
  fputs("] ", stdout);
  etrt_onnx_host_tensor h;
  etrt_status s = etrt_onnx_tensor_to_host(t, &h);
  if (s == ETRT_OK) {
    fputs("sha=", stdout);
    put_sha(h.data, h.nbytes);
    etrt_onnx_host_tensor_release(&h);
  } else {
    printf("error=%s", etrt_status_name(s));
  }
  putchar('\n');
}

static void put_value_info(const char *what, const etrt_onnx_value_info *vi, int depth) {
  indent(depth);
  printf("%s ", what);
  put_str(vi->name);
  printf(" kind=%d elem=%d shape=", (int)vi->kind, (int)vi->elem_type);
  if (!vi->has_shape) {
    fputs("-\n", stdout);
    return;
  }
  putchar('[');
  for (size_t i = 0; i < vi->rank; ++i) {
    if (i) putchar(',');
    const etrt_onnx_dim *d = &vi->dims[i];
    if (d->has_value) {
      printf("%lld", (long long)d->value);
    } else if (d->param.size > 0) {
      putchar('$');
      put_escaped(d->param.data, d->param.size);
    } else {
      putchar('?');
    }
  }
  fputs("]\n", stdout);
}

static void put_graph(const etrt_onnx_graph *g, int depth);

static void put_attribute(const etrt_onnx_attribute *a, int depth) {
  indent(depth);
  fputs("attr ", stdout);
  put_str(a->name);
  printf(" type=%d", (int)a->type);
  switch (a->type) {
    case ETRT_ONNX_ATTR_FLOAT: {
      uint32_t bits;
      memcpy(&bits, &a->f, 4);
      printf(" f=%08x", bits);
      break;
    }
    case ETRT_ONNX_ATTR_INT:
      printf(" i=%lld", (long long)a->i);
      break;
    case ETRT_ONNX_ATTR_STRING:
      fputs(" s=", stdout);
      put_str(a->s);
      break;
    case ETRT_ONNX_ATTR_FLOATS:
      fputs(" floats=[", stdout);
      for (size_t i = 0; i < a->float_count; ++i) {
        uint32_t bits;
        memcpy(&bits, &a->floats[i], 4);
        printf("%s%08x", i ? "," : "", bits);
      }
      putchar(']');
      break;
    case ETRT_ONNX_ATTR_INTS:
      fputs(" ints=[", stdout);
      for (size_t i = 0; i < a->int_count; ++i)
        printf("%s%lld", i ? "," : "", (long long)a->ints[i]);
      putchar(']');
      break;
    case ETRT_ONNX_ATTR_STRINGS:
      fputs(" strings=[", stdout);
      for (size_t i = 0; i < a->string_count; ++i) {
        if (i) putchar(',');
        put_str(a->strings[i]);
      }
      putchar(']');
      break;
    default:
      break;
  }
  putchar('\n');
  if (a->t != NULL) put_tensor(a->t, depth + 1);
  for (size_t i = 0; i < a->tensor_count; ++i) put_tensor(&a->tensors[i], depth + 1);
  if (a->g != NULL) put_graph(a->g, depth + 1);
  for (size_t i = 0; i < a->graph_count; ++i) put_graph(&a->graphs[i], depth + 1);
}

static void put_graph(const etrt_onnx_graph *g, int depth) {
  indent(depth);
  fputs("graph ", stdout);
  put_str(g->name);
  putchar('\n');
  for (size_t i = 0; i < g->input_count; ++i) put_value_info("input", &g->inputs[i], depth);
  for (size_t i = 0; i < g->output_count; ++i) put_value_info("output", &g->outputs[i], depth);
  for (size_t i = 0; i < g->value_info_count; ++i)
    put_value_info("value_info", &g->value_infos[i], depth);
  for (size_t i = 0; i < g->initializer_count; ++i) put_tensor(&g->initializers[i], depth);
  for (size_t i = 0; i < g->node_count; ++i) {
    const etrt_onnx_node *n = &g->nodes[i];
    indent(depth);
    fputs("node ", stdout);
    put_str(n->name);
    putchar(' ');
    put_str(n->op_type);
    putchar(' ');
    put_str(n->domain);
    fputs(" in=", stdout);
    for (size_t k = 0; k < n->input_count; ++k) {
      if (k) putchar(',');
      put_str(n->inputs[k]);
    }
    fputs(" out=", stdout);
    for (size_t k = 0; k < n->output_count; ++k) {
      if (k) putchar(',');
      put_str(n->outputs[k]);
    }
    putchar('\n');
    for (size_t k = 0; k < n->attribute_count; ++k) put_attribute(&n->attributes[k], depth + 1);
  }
}

static int probe_model(const char *path) {
  etrt_onnx_model *m;
  printf("file %s\n", path);
  etrt_status s = etrt_onnx_model_load_file(path, &m);
  if (s != ETRT_OK) {
    printf("error=%s %s\n", etrt_status_name(s), etrt_last_error());
    return 1;
  }
  printf("model ir_version=%lld producer=", (long long)etrt_onnx_model_ir_version(m));
  put_str(etrt_onnx_model_producer_name(m));
  putchar('\n');
  for (size_t i = 0; i < etrt_onnx_model_opset_count(m); ++i) {
    const etrt_onnx_opset *o = &etrt_onnx_model_opsets(m)[i];
    fputs("opset ", stdout);
    put_str(o->domain);
    printf(" %lld\n", (long long)o->version);
  }
  for (size_t i = 0; i < etrt_onnx_model_function_count(m); ++i) {
    etrt_onnx_str domain, name;
    etrt_onnx_model_function(m, i, &domain, &name);
    fputs("function ", stdout);
    put_str(domain);
    putchar(' ');
    put_str(name);
    putchar('\n');
  }
  put_graph(etrt_onnx_model_graph(m), 0);
  etrt_onnx_model_free(m);
  return 0;
}

static int probe_tensor(const char *path) {
  printf("file %s\n", path);
  etrt_tensor_pb t;
  etrt_status s = etrt_tensor_pb_read_file(path, &t);
  if (s != ETRT_OK) {
    printf("error=%s %s\n", etrt_status_name(s), etrt_last_error());
    return 1;
  }
  fputs("pb ", stdout);
  putchar('\'');
  put_escaped(t.name, strlen(t.name));
  printf("' dtype=%s dims=[", etrt_dtype_name(t.dtype));
  for (int32_t i = 0; i < t.rank; ++i) printf("%s%lld", i ? "," : "", (long long)t.sizes[i]);
  fputs("] sha=", stdout);
  put_sha(t.data, t.nbytes);
  putchar('\n');
  etrt_tensor_pb_release(&t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--write") == 0) {
    etrt_tensor_pb t;
    etrt_status s = etrt_tensor_pb_read_file(argv[2], &t);
    if (s == ETRT_OK) {
      etrt_tensor_view view = {.data = t.data, .dtype = t.dtype, .rank = t.rank};
      memcpy(view.sizes, t.sizes, sizeof view.sizes);
      s = etrt_tensor_pb_write_file(argv[3], t.name, &view);
      etrt_tensor_pb_release(&t);
    }
    if (s != ETRT_OK) fprintf(stderr, "%s\n", etrt_last_error());
    return s == ETRT_OK ? 0 : 1;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    size_t n = strlen(argv[i]);
    int is_pb = n >= 3 && strcmp(argv[i] + n - 3, ".pb") == 0;
    failures += is_pb ? probe_tensor(argv[i]) : probe_model(argv[i]);
  }
  fflush(stdout);
  (void)failures; /* refusals are data for the caller, not a failure of the probe */
  return 0;
}
