/* .npy: round trips for every dtype and rank, numpy itself reading what etrt writes
 * and the reverse, zero copy when aligned, and every refusal naming field and offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/npy.h"
#include "test_util.h"

static void test_round_trip_every_dtype(void) {
  const etrt_dtype dtypes[] = {ETRT_DTYPE_FLOAT16, ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                               ETRT_DTYPE_BOOL,    ETRT_DTYPE_UINT8,   ETRT_DTYPE_INT8,
                               ETRT_DTYPE_INT16,   ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64,
                               ETRT_DTYPE_UINT16,  ETRT_DTYPE_UINT32,  ETRT_DTYPE_UINT64};
  const int64_t shapes[][ETRT_MAX_RANK] = {{0}, {0}, {5}, {2, 3}, {1, 2, 1, 2, 1, 2, 1, 2}};
  const int32_t ranks[] = {0, 1, 1, 2, 8};
  uint8_t data[256];
  for (int i = 0; i < 256; ++i) data[i] = (uint8_t)(i * 37 + 1);
  for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d) {
    for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s) {
      etrt_tensor_view v = {.data = data, .dtype = dtypes[d], .rank = ranks[s]};
      memcpy(v.sizes, shapes[s], sizeof v.sizes);
      uint8_t *buf;
      size_t size;
      CHECK_OK(etrt_npy_encode(&v, &buf, &size));
      etrt_npy npy;
      CHECK_OK(etrt_npy_parse(buf, size, &npy));
      CHECK(npy.view.dtype == v.dtype && npy.view.rank == v.rank);
      CHECK(memcmp(npy.view.sizes, v.sizes, (size_t)v.rank * 8) == 0);
      CHECK_EQ_INT(npy.data_offset % 64, 0);
      CHECK(memcmp(npy.view.data, data, npy.nbytes) == 0);
      CHECK(npy.owned == NULL && npy.view.data == buf + npy.data_offset); /* zero copy */
      etrt_npy_release(&npy);
      free(buf);
    }
  }
  etrt_tensor_view bad = {.data = data, .dtype = ETRT_DTYPE_INVALID, .rank = 1, .sizes = {2}};
  uint8_t *buf;
  size_t size;
  CHECK_FAILS(etrt_npy_encode(&bad, &buf, &size), ETRT_ERROR_UNSUPPORTED,
              "has no NumPy equivalent");
}

/* bfloat16 as ml_dtypes saves it ('<V2'), and as NumPy saves a loaded copy ('|V2'). */
static void test_bfloat16(void) {
  uint16_t bits[3] = {0x3f80, 0xc020, 0x4040}; /* 1, -2.5, 3 */
  etrt_tensor_view v = {.data = bits, .dtype = ETRT_DTYPE_BFLOAT16, .rank = 1, .sizes = {3}};
  uint8_t *buf;
  size_t size;
  CHECK_OK(etrt_npy_encode(&v, &buf, &size));
  char header[129] = {0};
  memcpy(header, buf, size < 128 ? size : 128);
  char *descr = strstr(header + 10, "'descr': '<V2'");
  CHECK(descr != NULL);
  etrt_npy npy;
  CHECK_OK(etrt_npy_parse(buf, size, &npy));
  CHECK(npy.view.dtype == ETRT_DTYPE_BFLOAT16 && npy.view.rank == 1 && npy.view.sizes[0] == 3);
  CHECK(memcmp(npy.view.data, bits, sizeof bits) == 0);
  etrt_npy_release(&npy);
  buf[descr - header + 10] = '|';
  CHECK_OK(etrt_npy_parse(buf, size, &npy));
  CHECK(npy.view.dtype == ETRT_DTYPE_BFLOAT16);
  etrt_npy_release(&npy);
  free(buf);
}

static void test_misaligned_copy(void) {
  double values[3] = {1.5, -2, 4};
  etrt_tensor_view v = {.data = values, .dtype = ETRT_DTYPE_FLOAT64, .rank = 1, .sizes = {3}};
  uint8_t *buf;
  size_t size;
  CHECK_OK(etrt_npy_encode(&v, &buf, &size));
  uint8_t *odd = malloc(size + 1);
  memcpy(odd + 1, buf, size);
  etrt_npy npy;
  CHECK_OK(etrt_npy_parse(odd + 1, size, &npy));
  CHECK(npy.owned != NULL && npy.view.data == npy.owned);
  CHECK(((double *)npy.view.data)[1] == -2);
  etrt_npy_release(&npy);
  free(odd);
  free(buf);
}

static void test_with_numpy(void) {
  char path[512], command[4096];
  float values[6] = {0.5f, 1, 2, 3, 4, -5};
  etrt_tensor_view v = {.data = values, .dtype = ETRT_DTYPE_FLOAT32, .rank = 2, .sizes = {2, 3}};
  snprintf(path, sizeof path, "%s/from_etrt.npy", etrt_test_tmpdir());
  CHECK_OK(etrt_npy_write_file(path, &v));
  snprintf(command, sizeof command,
           "/usr/bin/python3 -c \"import numpy as np; a = np.load('%s'); "
           "assert a.dtype == np.float32 and a.shape == (2, 3) and a[1, 2] == -5, a; print('ok')\"",
           path);
  char *out = NULL;
  int rc = etrt_test_run(command, 1, &out);
  CHECK(rc == 0 && out != NULL && strstr(out, "ok") != NULL);
  free(out);
  /* numpy writes, etrt reads: versions 1.0 and 2.0, bool, scalar, a 1-tuple. */
  snprintf(path, sizeof path, "%s/np", etrt_test_tmpdir());
  snprintf(command, sizeof command,
           "/usr/bin/python3 -c \"import numpy as np; from numpy.lib import format as f; "
           "np.save('%s_i64.npy', np.arange(7, dtype=np.int64)); "
           "np.save('%s_bool.npy', np.array([[True, False]])); "
           "np.save('%s_scalar.npy', np.float64(2.5)); "
           "fh = open('%s_v2.npy', 'wb'); f.write_array(fh, np.ones((2, 2), np.float16), "
           "version=(2, 0)); fh.close()\"",
           path, path, path, path);
  rc = etrt_test_run(command, 1, &out);
  CHECK_EQ_INT(rc, 0);
  free(out);
  char file[600];
  etrt_tensor_view r;
  size_t nbytes;
  snprintf(file, sizeof file, "%s_i64.npy", path);
  CHECK_OK(etrt_npy_read_file(file, &r, &nbytes));
  CHECK(r.dtype == ETRT_DTYPE_INT64 && r.rank == 1 && r.sizes[0] == 7 &&
        ((int64_t *)r.data)[6] == 6);
  free(r.data);
  snprintf(file, sizeof file, "%s_bool.npy", path);
  CHECK_OK(etrt_npy_read_file(file, &r, &nbytes));
  CHECK(r.dtype == ETRT_DTYPE_BOOL && r.rank == 2 && r.sizes[1] == 2 &&
        ((uint8_t *)r.data)[0] == 1);
  free(r.data);
  snprintf(file, sizeof file, "%s_scalar.npy", path);
  CHECK_OK(etrt_npy_read_file(file, &r, &nbytes));
  CHECK(r.dtype == ETRT_DTYPE_FLOAT64 && r.rank == 0 && ((double *)r.data)[0] == 2.5);
  free(r.data);
  snprintf(file, sizeof file, "%s_v2.npy", path);
  CHECK_OK(etrt_npy_read_file(file, &r, &nbytes));
  CHECK(r.dtype == ETRT_DTYPE_FLOAT16 && r.rank == 2 && nbytes == 8 &&
        ((uint16_t *)r.data)[3] == 0x3C00);
  free(r.data);
  snprintf(file, sizeof file, "%s_missing.npy", path);
  CHECK_FAILS(etrt_npy_read_file(file, &r, &nbytes), ETRT_ERROR_IO, "_missing.npy");
}

/* A v1.0 file with `dict` as its header (padded to 64 with a newline) and `data`. */
static size_t make_npy(uint8_t *out, const char *dict, const void *data, size_t nbytes) {
  size_t n = strlen(dict);
  size_t header = ((10 + n + 1 + 63) / 64) * 64 - 10;
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (uint8_t)header;
  out[9] = (uint8_t)(header >> 8);
  memcpy(out + 10, dict, n);
  memset(out + 10 + n, ' ', header - n - 1);
  out[10 + header - 1] = '\n';
  memcpy(out + 10 + header, data, nbytes);
  return 10 + header + nbytes;
}

#define REFUSE_DICT(dict, nbytes, text)                                             \
  do {                                                                              \
    size_t size_ = make_npy(buf, dict, payload, nbytes);                            \
    CHECK_FAILS(etrt_npy_parse(buf, size_, &npy), ETRT_ERROR_INVALID_FORMAT, text); \
    CHECK_STR_CONTAINS(etrt_last_error(), "byte offset");                           \
  } while (0)

static void test_refusals(void) {
  static uint8_t buf[4096];
  uint8_t payload[64] = {0};
  etrt_npy npy;
  const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  size_t size = make_npy(buf, good, payload, 24);
  CHECK_OK(etrt_npy_parse(buf, size, &npy));
  etrt_npy_release(&npy);
  /* Keys in another order, double quotes, no trailing comma: still Python. */
  size =
      make_npy(buf, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<i2\"}", payload, 6);
  CHECK_OK(etrt_npy_parse(buf, size, &npy));
  CHECK(npy.view.dtype == ETRT_DTYPE_INT16 && npy.view.rank == 1 && npy.view.sizes[0] == 3);
  etrt_npy_release(&npy);

  CHECK_FAILS(etrt_npy_parse(buf, 5, &npy), ETRT_ERROR_INVALID_FORMAT,
              "header at byte offset 0: truncated");
  size = make_npy(buf, good, payload, 24);
  buf[1] = 'M';
  CHECK_FAILS(etrt_npy_parse(buf, size, &npy), ETRT_ERROR_INVALID_FORMAT, "magic at byte offset 0");
  size = make_npy(buf, good, payload, 24);
  buf[6] = 4;
  CHECK_FAILS(etrt_npy_parse(buf, size, &npy), ETRT_ERROR_INVALID_FORMAT,
              "version at byte offset 6: format 4.0");
  size = make_npy(buf, good, payload, 24);
  buf[8] = 0xff;
  buf[9] = 0x7f;
  CHECK_FAILS(etrt_npy_parse(buf, size, &npy), ETRT_ERROR_INVALID_FORMAT,
              "header length at byte offset 8");
  size = make_npy(buf, good, payload, 24);
  CHECK_FAILS(etrt_npy_parse(buf, size - 1, &npy), ETRT_ERROR_INVALID_FORMAT, "truncated");
  CHECK_FAILS(etrt_npy_parse(buf, size - 1, &npy), ETRT_ERROR_INVALID_FORMAT,
              "data at byte offset 128: 23 bytes, the shape and dtype need 24");
  size = make_npy(buf, good, payload, 28);
  CHECK_FAILS(etrt_npy_parse(buf, size, &npy), ETRT_ERROR_INVALID_FORMAT, "trailing bytes");

  REFUSE_DICT("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8,
              "fortran_order at byte offset 44: Fortran-order");
  REFUSE_DICT("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8,
              "descr at byte offset 20: big-endian dtype '>f4'");
  REFUSE_DICT("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16,
              "dtype '<c8' is not supported");
  REFUSE_DICT("{'descr': 'V2', 'fortran_order': False, 'shape': (2,), }", 4, "dtype 'V2'");
  REFUSE_DICT("{'descr': '<V4', 'fortran_order': False, 'shape': (2,), }", 8, "dtype '<V4'");
  REFUSE_DICT("{'descr': '<f4', 'shape': (2,), }", 8, "missing key 'fortran_order'");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", 8,
              "key 'shape' appears twice");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8,
              "unknown key 'extra'");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8,
              "a one-element tuple needs a trailing comma");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8,
              "shape at byte offset 61: expected a non-negative integer");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (02,), }", 8, "leading zero");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24,
              "expected ',' or ')'");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8,
              "integer too large");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4,
              "more than 8 dimensions");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8,
              "expected only padding");
  REFUSE_DICT("{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", 8,
              "dtype '<f4, ' is not supported");
  REFUSE_DICT("{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", 8, "expected ',' or '}'");
  REFUSE_DICT("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,), }", 8,
              "unexpected character 0x5c");
  REFUSE_DICT("['descr', '<f4']", 8, "header at byte offset 10: expected '{'");
  REFUSE_DICT("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8,
              "overflows");
  /* A header that does not end with a newline. */
  size = make_npy(buf, good, payload, 24);
  buf[size - 24 - 1] = ' ';
  CHECK_FAILS(etrt_npy_parse(buf, size, &npy), ETRT_ERROR_INVALID_FORMAT, "newline");
}

int main(void) {
  RUN_TEST(test_round_trip_every_dtype);
  RUN_TEST(test_misaligned_copy);
  RUN_TEST(test_bfloat16);
  RUN_TEST(test_with_numpy);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
