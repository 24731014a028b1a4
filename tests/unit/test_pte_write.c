/* The .pte writer: round trips through the reader, ExecuTorch's layout (extended
 * header, segment and inline alignment), determinism, and the parse time of a
 * 1 MB program. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "pte/pte.h"
#include "pte_testing.h"
#include "test_util.h"

static uint64_t le64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static uint32_t le32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static void test_sample_round_trip(void) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(pte_make_sample(&b));
  if (b == NULL) return;
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(etrt_pte_builder_write(b, &bytes, &size));
  etrt_pte_program *p = NULL;
  CHECK_OK(etrt_pte_parse(bytes, size, &p));
  if (p == NULL) {
    etrt_pte_builder_destroy(b);
    free(bytes);
    return;
  }
  CHECK(pte_program_eq(etrt_pte_builder_program(b), p));
  if (pte_diff_where[0]) fprintf(stderr, "first difference: %s\n", pte_diff_where);

  /* The extended header, as ExecuTorch writes it. */
  CHECK(memcmp(bytes + 4, "ET12", 4) == 0);
  CHECK(memcmp(bytes + 8, "eh00", 4) == 0);
  CHECK(p->has_extended_header);
  CHECK_EQ_INT(p->extended_header.header_length, 32);
  CHECK_EQ_INT(le32(bytes + 12), 32);
  uint64_t program_size = le64(bytes + 16), base = le64(bytes + 24), data_size = le64(bytes + 32);
  CHECK_EQ_INT(p->extended_header.program_size, program_size);
  CHECK_EQ_INT(base % 128, 0);
  CHECK(base >= program_size && base - program_size < 128);
  CHECK_EQ_INT(base + data_size, size);

  /* Segments: constants first, then the delegate payload, the mutable data and
   * the named data (256-byte aligned as asked). */
  CHECK_EQ_INT(p->segments_count, 4);
  CHECK_EQ_INT(p->segments[0].offset, 0);
  CHECK_EQ_INT(p->segments[0].size, 32 + 5);
  for (size_t i = 1; i < p->segments_count; ++i) CHECK_EQ_INT(p->segments[i].offset % 128, 0);
  CHECK_EQ_INT(p->segments[3].offset % 256, 0);
  CHECK(p->has_constant_segment);
  CHECK_EQ_INT(p->constant_segment.segment_index, 0);
  CHECK_EQ_INT(p->constant_segment.offsets.count, 3);
  CHECK_EQ_INT(p->constant_segment.offsets.data[1], 0);
  CHECK_EQ_INT(p->constant_segment.offsets.data[2], 32);

  const etrt_pte_plan *f = etrt_pte_program_find_plan(p, "forward");
  CHECK(f != NULL);
  CHECK(etrt_pte_program_find_plan(p, "missing") == NULL);
  if (f != NULL) {
    etrt_pte_bytes c;
    CHECK_OK(etrt_pte_program_constant(p, f->values[5].tensor.data_buffer_idx, 24, &c));
    float w[6];
    memcpy(w, c.data, sizeof w);
    CHECK_NEAR(w[5], 6.0f, 0);
    CHECK_OK(etrt_pte_program_constant(p, 2, 5, &c));
    CHECK_FAILS(etrt_pte_program_constant(p, 2, 6, &c), ETRT_ERROR_INVALID_FORMAT, "needs 6 bytes");
    CHECK_FAILS(etrt_pte_program_constant(p, 0, 4, &c), ETRT_ERROR_INVALID_ARGUMENT, "placeholder");
    CHECK_FAILS(etrt_pte_program_constant(p, 3, 4, &c), ETRT_ERROR_NOT_FOUND, "constant 3");

    etrt_pte_bytes payload;
    CHECK_OK(etrt_pte_program_delegate_data(p, &f->delegates[0], &payload));
    CHECK(payload.size == 300 && payload.data[0] == 0xe7);
    CHECK_EQ_INT((size_t)(payload.data - bytes) % 128, 0); /* aligned in the file */
    CHECK_OK(etrt_pte_program_delegate_data(p, &f->delegates[1], &payload));
    CHECK(payload.size == 5 && memcmp(payload.data, "inln", 5) == 0);
    /* Inline bytes carry ExecuTorch's force_align 16. */
    CHECK_EQ_INT((size_t)(payload.data - bytes) % 16, 0);

    etrt_pte_bytes initial;
    CHECK_OK(etrt_pte_program_mutable_data(p, &f->values[14].tensor, 24, &initial));
    float nine;
    memcpy(&nine, initial.data + 20, 4);
    CHECK_NEAR(nine, 9.0f, 0);

    etrt_device d = etrt_pte_tensor_device(&f->values[4].tensor);
    CHECK(d.type == ETRT_DEVICE_CUDA && d.index == 1);
    d = etrt_pte_tensor_device(&f->values[12].tensor);
    CHECK(d.type == ETRT_DEVICE_CPU && d.index == 0);
    CHECK_EQ_INT(etrt_pte_allocation_offset(&f->values[12].tensor.allocation_info),
                 (1ull << 32) + 16);
    size_t nbytes = 0;
    CHECK_OK(etrt_pte_tensor_nbytes(&f->values[12].tensor, &nbytes));
    CHECK_EQ_INT(nbytes, 12); /* float16 [2, 3] */
    CHECK(strcmp(f->values[6].string_val.data, "h\xc3\xa9llo \"q\"") == 0);
  }
  etrt_pte_bytes named;
  CHECK_OK(etrt_pte_program_named_data(p, "weights.external", &named));
  CHECK(named.size == 40 && named.data[0] == 0x4e);
  CHECK_FAILS(etrt_pte_program_named_data(p, "nope", &named), ETRT_ERROR_NOT_FOUND, "'nope'");
  etrt_pte_bytes seg;
  CHECK_FAILS(etrt_pte_program_segment(p, 9, &seg), ETRT_ERROR_NOT_FOUND, "segment 9");

  etrt_pte_program_free(p);
  etrt_pte_builder_destroy(b);
  free(bytes);
}

/* The same model gives the same bytes, and writing what was read gives them back. */
static void test_determinism(void) {
  uint8_t *first = NULL, *second = NULL, *third = NULL;
  size_t n1 = 0, n2 = 0, n3 = 0;
  for (int round = 0; round < 2; ++round) {
    etrt_pte_builder *b = NULL;
    CHECK_OK(pte_make_sample(&b));
    if (b == NULL) return;
    CHECK_OK(etrt_pte_builder_write(b, round == 0 ? &first : &second, round == 0 ? &n1 : &n2));
    etrt_pte_builder_destroy(b);
  }
  CHECK(n1 == n2 && first && second && memcmp(first, second, n1) == 0);
  etrt_pte_program *p = NULL;
  CHECK_OK(etrt_pte_parse(first, n1, &p));
  if (p) CHECK_OK(etrt_pte_write(p, &third, &n3));
  CHECK(n3 == n1 && third && memcmp(first, third, n1) == 0);
  etrt_pte_program_free(p);
  free(first);
  free(second);
  free(third);
}

static void round_trip_file(const char *name) {
  uint8_t *data = NULL, *out = NULL;
  size_t size = 0, out_size = 0;
  CHECK_OK(etrt_file_read_all(etrt_test_fixture(name), &data, &size));
  etrt_pte_program *a = NULL, *b = NULL;
  CHECK_OK(etrt_pte_parse(data, size, &a));
  if (a) CHECK_OK(etrt_pte_write(a, &out, &out_size));
  if (out) CHECK_OK(etrt_pte_parse(out, out_size, &b));
  if (a && b) {
    CHECK(pte_program_eq(a, b));
    if (pte_diff_where[0]) fprintf(stderr, "%s: first difference: %s\n", name, pte_diff_where);
    /* No segment data: no extended header, as ExecuTorch does. */
    CHECK(!b->has_extended_header);
  }
  etrt_pte_program_free(a);
  etrt_pte_program_free(b);
  free(out);
  free(data);
}

static void test_fixture_round_trips(void) {
  round_trip_file("pte/add.pte");
  round_trip_file("pte/linear_inline_constants.pte");
}

/* The older 24-byte header (no segment_data_size): segments run to the file's end. */
static void test_24_byte_header(void) {
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(pte_write_sample(NULL, &bytes, &size));
  if (bytes == NULL) return;
  uint32_t len24 = 24;
  memcpy(bytes + 12, &len24, 4);
  memset(bytes + 32, 0xee, 8); /* no longer part of the header: ignored */
  etrt_pte_program *p = NULL;
  CHECK_OK(etrt_pte_parse(bytes, size, &p));
  if (p) {
    CHECK_EQ_INT(p->extended_header.header_length, 24);
    CHECK_EQ_INT(p->extended_header.segment_data_size, 0);
    CHECK_EQ_INT(p->segments_count, 4);
  }
  etrt_pte_program_free(p);
  free(bytes);
}

static void test_writer_refuses_missing_arrays(void) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(etrt_pte_builder_create(&b));
  if (b == NULL) return;
  etrt_pte_program *p = etrt_pte_builder_program(b);
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  plan->values_count = 3; /* but no values */
  p->plans = plan;
  p->plans_count = 1;
  uint8_t *out = NULL;
  size_t size = 0;
  CHECK_FAILS(etrt_pte_write(p, &out, &size), ETRT_ERROR_INVALID_ARGUMENT, "ExecutionPlan.values");
  CHECK(out == NULL);
  uint32_t idx;
  CHECK_FAILS(etrt_pte_builder_add_segment(b, "x", 1, 3, &idx), ETRT_ERROR_INVALID_ARGUMENT,
              "power of two");
  etrt_pte_builder_destroy(b);
}

/* A model with no segment data has no extended header and no constant segment
 * bytes; the builder still records the placeholder constant, as ExecuTorch does. */
static void test_minimal_builder_program(void) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(etrt_pte_builder_create(&b));
  if (b == NULL) return;
  etrt_pte_program *p = etrt_pte_builder_program(b);
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  plan->name = etrt_pte_builder_str(b, "forward");
  p->plans = plan;
  p->plans_count = 1;
  uint8_t *out = NULL;
  size_t size = 0;
  CHECK_OK(etrt_pte_builder_write(b, &out, &size));
  etrt_pte_program *q = NULL;
  if (out) CHECK_OK(etrt_pte_parse(out, size, &q));
  if (q) {
    CHECK(!q->has_extended_header);
    CHECK_EQ_INT(q->segments_count, 1);
    CHECK_EQ_INT(q->segments[0].size, 0);
    CHECK_EQ_INT(q->constant_segment.offsets.count, 1);
    CHECK_EQ_INT(q->plans_count, 1);
  }
  etrt_pte_program_free(q);
  free(out);
  etrt_pte_builder_destroy(b);
}

/* `etrt inspect --json` on a program with delegates, segments, named data and
 * devices: checked by Python's json module. */
static void test_inspect_json(void) {
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(pte_write_sample(NULL, &bytes, &size));
  if (bytes == NULL) return;
  char path[1024], command[4096];
  snprintf(path, sizeof path, "%s/sample.pte", etrt_test_tmpdir());
  CHECK_OK(etrt_file_write_atomic(path, bytes, size));
  free(bytes);
  static const char *const script =
      "import json, sys\n"
      "d = json.load(sys.stdin)\n"
      "h = d['extended_header']\n"
      "assert h['segment_base_offset'] % 128 == 0 and h['segment_data_size'] > 0, h\n"
      "assert len(d['segments']) == 4 and d['segments'][3]['size'] == 40, d['segments']\n"
      "assert d['named_data'] == [{'key': 'weights.external', 'segment_index': 3}], "
      "d['named_data']\n"
      "m = d['methods'][0]\n"
      "assert [x['name'] for x in d['methods']] == ['forward', 'other']\n"
      "assert m['num_values'] == 15\n"
      "assert m['input_tensors'] == [{'dtype': 'float32', 'sizes': [2, 3], 'device': 'cuda:1', "
      "'dynamic': 'bound'}], "
      "m['input_tensors']\n"
      "assert m['output_tensors'] == [{'dtype': 'float16', 'sizes': [2, 3], 'device': 'cpu'}], "
      "m['output_tensors']\n"
      "assert [t['index'] for t in m['tensors']] == [4, 5, 12, 13, 14]\n"
      "assert m['operators'] == ['aten::add.out', 'et_copy::_h2d_copy'], m['operators']\n"
      "kinds = [i['kind'] for i in m['instructions']]\n"
      "assert kinds == ['kernel', 'delegate', 'delegate', 'move', 'jump_false', 'free', 'kernel'], "
      "kinds\n"
      "assert m['instructions'][1] == {'kind': 'delegate', 'delegate': 0, 'args': [4, 12]}\n"
      "assert m['instructions'][3] == {'kind': 'move'} and m['instructions'][5] == {'kind': "
      "'free'}\n"
      "assert m['delegates'][0] == {'id': 'EtrtBackend', 'location': 'segment', 'index': 1, "
      "'size': 300,\n"
      "    'compile_specs': {'target_device': 'cuda:1', 'blob': 'hex:00ff10'}}, m['delegates'][0]\n"
      "assert m['delegates'][1] == {'id': 'InlineBackend', 'location': 'inline', 'index': 0, "
      "'size': 5,\n"
      "    'compile_specs': {}}, m['delegates'][1]\n"
      "assert m['non_const_buffer_sizes'] == [0, 96, 4352]\n"
      "assert m['non_const_buffer_device'] == [{'buffer_idx': 2, 'device': 'cuda:1'}]\n"
      "print('json ok')\n";
  char script_path[1024];
  snprintf(script_path, sizeof script_path, "%s/check.py", etrt_test_tmpdir());
  CHECK_OK(etrt_file_write_atomic(script_path, script, strlen(script)));
  snprintf(command, sizeof command, "'%s' inspect --json '%s' | /usr/bin/python3 '%s'",
           etrt_test_tool(), path, script_path);
  char *output = NULL;
  int rc = etrt_test_run(command, 1, &output);
  CHECK_EQ_INT(rc, 0);
  CHECK_STR_CONTAINS(output, "json ok");
  if (rc != 0 && output) fprintf(stderr, "%s\n", output);
  free(output);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A ~1 MB program (a large delegate payload in a segment plus a few hundred
 * values): prints how long parsing takes. The goal is well under 10 ms; the time
 * is printed, not asserted, as machines vary. */
static void test_parse_time_1mb(void) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(pte_make_sample(&b));
  if (b == NULL) return;
  size_t blob_size = 1 << 20;
  uint8_t *blob = calloc(blob_size, 1);
  uint32_t segment;
  CHECK_OK(etrt_pte_builder_add_segment(b, blob, blob_size, 0, &segment));
  free(blob);
  etrt_pte_program *m = etrt_pte_builder_program(b);
  etrt_pte_plan *plans = (etrt_pte_plan *)m->plans;
  enum { EXTRA = 500 };
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, PTE_SAMPLE_VALUES + EXTRA);
  memcpy(values, plans[0].values, sizeof(etrt_pte_value) * PTE_SAMPLE_VALUES);
  for (size_t i = PTE_SAMPLE_VALUES; i < PTE_SAMPLE_VALUES + EXTRA; ++i) values[i] = values[4];
  plans[0].values = values;
  plans[0].values_count = PTE_SAMPLE_VALUES + EXTRA;
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(etrt_pte_builder_write(b, &bytes, &size));
  etrt_pte_builder_destroy(b);
  if (bytes == NULL) return;
  CHECK(size > 1000000);
  enum { RUNS = 50 };
  double best = 1e9, total = 0;
  for (int i = 0; i < RUNS; ++i) {
    etrt_pte_program *p = NULL;
    double t0 = now_ms();
    CHECK_OK(etrt_pte_parse(bytes, size, &p));
    double dt = now_ms() - t0;
    total += dt;
    if (dt < best) best = dt;
    etrt_pte_program_free(p);
  }
  printf("parse of a %zu-byte program: best %.3f ms, mean %.3f ms over %d runs (goal < 10 ms)\n",
         size, best, total / RUNS, RUNS);
  free(bytes);
}

int main(void) {
  RUN_TEST(test_sample_round_trip);
  RUN_TEST(test_determinism);
  RUN_TEST(test_fixture_round_trips);
  RUN_TEST(test_24_byte_header);
  RUN_TEST(test_writer_refuses_missing_arrays);
  RUN_TEST(test_minimal_builder_program);
  RUN_TEST(test_inspect_json);
  RUN_TEST(test_parse_time_1mb);
  return TEST_EXIT();
}
