/* Every model.onnx and every .pb tensor of the ONNX backend test data (Debian package
 * libonnx-testdata) through the reader: models must all parse, tensors must convert or
 * be refused as unsupported with a message; nothing may crash. Skipped, with a line
 * saying so, where the data is not installed. ETRT_ONNX_TESTDATA overrides the folder. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>

#include "builder/onnx_model.h"
#include "builder/tensor_pb.h"
#include "test_util.h"

static struct {
  int models, models_ok;
  int tensors, tensors_ok, tensors_unsupported;
  int pbs, pbs_ok, pbs_unsupported;
  int subgraphs;
} counts;

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A refusal that is allowed: unsupported, with a message. Anything else fails. */
static void expect_converts_or_unsupported(etrt_status s, const char *path, int *ok,
                                           int *unsupported) {
  if (s == ETRT_OK) {
    ++*ok;
  } else if (s == ETRT_ERROR_UNSUPPORTED && etrt_last_error()[0] != '\0') {
    ++*unsupported;
  } else {
    etrt_test_fail(__FILE__, __LINE__, "%s: %s: %s", path, etrt_status_name(s), etrt_last_error());
  }
}

static void check_tensor(const etrt_onnx_tensor *t, const char *path) {
  ++counts.tensors;
  etrt_onnx_host_tensor h;
  etrt_status s = etrt_onnx_tensor_to_host(t, &h);
  if (s == ETRT_OK) {
    CHECK(h.data != NULL);
    CHECK(h.nbytes == (size_t)h.numel * etrt_dtype_size(h.dtype));
    etrt_onnx_host_tensor_release(&h);
  }
  expect_converts_or_unsupported(s, path, &counts.tensors_ok, &counts.tensors_unsupported);
}

static void check_graph(const etrt_onnx_graph *g, const char *path) {
  for (size_t i = 0; i < g->initializer_count; ++i) check_tensor(&g->initializers[i], path);
  for (size_t i = 0; i < g->node_count; ++i) {
    const etrt_onnx_node *n = &g->nodes[i];
    CHECK(n->op_type.size > 0);
    for (size_t a = 0; a < n->attribute_count; ++a) {
      const etrt_onnx_attribute *attr = &n->attributes[a];
      CHECK(attr->type != ETRT_ONNX_ATTR_UNDEFINED);
      if (attr->t != NULL) check_tensor(attr->t, path);
      for (size_t k = 0; k < attr->tensor_count; ++k) check_tensor(&attr->tensors[k], path);
      if (attr->g != NULL) {
        ++counts.subgraphs;
        check_graph(attr->g, path);
      }
      for (size_t k = 0; k < attr->graph_count; ++k) {
        ++counts.subgraphs;
        check_graph(&attr->graphs[k], path);
      }
    }
  }
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type != FTW_F) return 0;
  if (ends_with(path, ".onnx")) {
    ++counts.models;
    etrt_onnx_model *m;
    etrt_status s = etrt_onnx_model_load_file(path, &m);
    if (s != ETRT_OK) {
      etrt_test_fail(__FILE__, __LINE__, "%s: %s", path, etrt_last_error());
      return 0;
    }
    ++counts.models_ok;
    CHECK(etrt_onnx_model_ir_version(m) > 0);
    CHECK(etrt_onnx_model_opset_count(m) > 0);
    check_graph(etrt_onnx_model_graph(m), path);
    etrt_onnx_model_free(m);
  } else if (ends_with(path, ".pb")) {
    ++counts.pbs;
    etrt_tensor_pb t;
    etrt_status s = etrt_tensor_pb_read_file(path, &t);
    if (s == ETRT_OK) {
      CHECK(t.data != NULL && t.name != NULL);
      etrt_tensor_pb_release(&t);
    }
    expect_converts_or_unsupported(s, path, &counts.pbs_ok, &counts.pbs_unsupported);
  }
  return 0;
}

static void test_all_testdata(void) {
  const char *root = getenv("ETRT_ONNX_TESTDATA");
  if (root == NULL || root[0] == '\0') root = "/usr/share/libonnx-testdata/data";
  struct stat st;
  if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
    printf("skipped: %s is absent (Debian package libonnx-testdata)\n", root);
    return;
  }
  CHECK(nftw(root, visit, 16, FTW_PHYS) == 0);
  printf(
      "models: %d read of %d (%d subgraphs); tensors in models: %d converted, %d unsupported "
      "of %d\n",
      counts.models_ok, counts.models, counts.subgraphs, counts.tensors_ok,
      counts.tensors_unsupported, counts.tensors);
  printf(".pb files: %d read, %d unsupported of %d\n", counts.pbs_ok, counts.pbs_unsupported,
         counts.pbs);
  /* The package holds about a thousand models and three thousand tensors: a walk that
   * found almost nothing has not tested anything. */
  CHECK(counts.models > 500);
  CHECK(counts.pbs > 1000);
  CHECK(counts.models_ok == counts.models);
  /* Unsupported .pb files are the string, sequence and optional cases: a few percent. */
  CHECK(counts.pbs_unsupported * 10 < counts.pbs);
}

int main(void) {
  RUN_TEST(test_all_testdata);
  return TEST_EXIT();
}
