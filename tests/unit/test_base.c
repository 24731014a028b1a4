#include <stdint.h>

#include "base/digest.h"
#include "base/digest_shani.h"
#include "base/file.h"
#include "base/log.h"
#include "base/status.h"
#include "etrt/types.h"
#include "test_util.h"

static void test_sha256_known_answers(void) {
  uint8_t d[ETRT_DIGEST_SIZE];
  etrt_sha256("abc", 3, d);
  static const uint8_t abc[4] = {0xba, 0x78, 0x16, 0xbf};
  CHECK(memcmp(d, abc, 4) == 0);
  CHECK_EQ_INT(d[31], 0xad);
  /* Streaming in odd pieces gives the same digest as one call. */
  uint8_t data[1000];
  for (int i = 0; i < 1000; ++i) data[i] = (uint8_t)(i * 7);
  uint8_t once[ETRT_DIGEST_SIZE], pieces[ETRT_DIGEST_SIZE];
  etrt_sha256(data, sizeof data, once);
  etrt_sha256_ctx ctx;
  etrt_sha256_init(&ctx);
  etrt_sha256_update(&ctx, data, 3);
  etrt_sha256_update(&ctx, data + 3, 200);
  etrt_sha256_update(&ctx, data + 203, 797);
  etrt_sha256_final(&ctx, pieces);
  CHECK(memcmp(once, pieces, sizeof once) == 0);
}

/* Many blocks (the bulk path) against published answers, and the SHA-extension rounds
 * against the portable ones where the processor has them. */
static void test_sha256_bulk_and_extensions(void) {
  static const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  static const uint8_t two_blocks_answer[8] = {0x24, 0x8d, 0x6a, 0x61, 0xd2, 0x06, 0x38, 0xb8};
  uint8_t d[ETRT_DIGEST_SIZE];
  etrt_sha256(two_blocks, strlen(two_blocks), d);
  CHECK(memcmp(d, two_blocks_answer, 8) == 0);
  size_t million = 1000000;
  uint8_t *as = malloc(million);
  memset(as, 'a', million);
  etrt_sha256(as, million, d);
  static const uint8_t million_answer[8] = {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92};
  CHECK(memcmp(d, million_answer, 8) == 0);
  CHECK_EQ_INT(d[31], 0xd0);
  for (size_t i = 0; i < 64 * 37; ++i) as[i] = (uint8_t)(i * 131 + (i >> 7));
  uint32_t portable[8] = {1, 2, 3, 4, 5, 6, 7, 8}, extensions[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  etrt_sha256_portable_blocks(portable, as, 37);
  if (etrt_sha256_shani_available()) {
    etrt_sha256_shani_blocks(extensions, as, 37);
    CHECK(memcmp(portable, extensions, sizeof portable) == 0);
  }
  printf("  SHA extensions: %s\n", etrt_sha256_shani_available() ? "compared" : "absent");
  free(as);
}

static void test_errors_and_context(void) {
  CHECK_EQ_INT(etrt_error(ETRT_ERROR_NOT_FOUND, "thing %d missing", 3), ETRT_ERROR_NOT_FOUND);
  CHECK_STR_CONTAINS(etrt_last_error(), "thing 3 missing");
  etrt_error_context(ETRT_ERROR_NOT_FOUND, "method '%s': ", "forward");
  CHECK(strcmp(etrt_last_error(), "method 'forward': thing 3 missing") == 0);
  etrt_clear_error();
  CHECK(etrt_last_error()[0] == '\0');
  CHECK(strcmp(etrt_status_name(ETRT_ERROR_INVALID_FORMAT), "invalid format") == 0);
}

static void test_first_error_wins_during_cleanup(void) {
  /* A keep for a failure freezes the message; statuses still come back. */
  etrt_status first = etrt_error(ETRT_ERROR_DEVICE, "the copy failed");
  etrt_error_keep keep = etrt_error_keep_first(first);
  CHECK_EQ_INT(etrt_error(ETRT_ERROR_STATE, "the drain failed"), ETRT_ERROR_STATE);
  CHECK_EQ_INT(etrt_error_context(ETRT_ERROR_STATE, "cleanup: "), ETRT_ERROR_STATE);
  /* Nested keeps (a cleanup inside a cleanup) end in order. */
  etrt_error_keep inner = etrt_error_keep_first(ETRT_ERROR_STATE);
  etrt_error(ETRT_ERROR_IO, "the free failed");
  etrt_error_keep_end(inner);
  etrt_error(ETRT_ERROR_IO, "the destroy failed");
  etrt_error_keep_end(keep);
  CHECK(strcmp(etrt_last_error(), "the copy failed") == 0);
  /* Closed: messages are written again. */
  etrt_error(ETRT_ERROR_IO, "a later, separate failure");
  CHECK(strcmp(etrt_last_error(), "a later, separate failure") == 0);

  /* A keep for success changes nothing: cleanup failures on a success path report. */
  keep = etrt_error_keep_first(ETRT_OK);
  etrt_error(ETRT_ERROR_STATE, "the restore failed");
  etrt_error_keep_end(keep);
  CHECK(strcmp(etrt_last_error(), "the restore failed") == 0);

  CHECK_EQ_INT(etrt_status_first(ETRT_ERROR_DEVICE, ETRT_ERROR_STATE), ETRT_ERROR_DEVICE);
  CHECK_EQ_INT(etrt_status_first(ETRT_OK, ETRT_ERROR_STATE), ETRT_ERROR_STATE);
  CHECK_EQ_INT(etrt_status_first(ETRT_OK, ETRT_OK), ETRT_OK);
  etrt_clear_error();
}

static int log_count;
static char log_last[256];
static void capture(etrt_log_level level, const char *message, void *user) {
  (void)user;
  if (level == ETRT_LOG_INFO) ++log_count;
  snprintf(log_last, sizeof log_last, "%s", message);
}

static void test_log_levels_and_sink(void) {
  etrt_log_set_sink(capture, NULL);
  etrt_log_set_level(ETRT_LOG_WARN);
  etrt_log(ETRT_LOG_INFO, "hidden");
  CHECK_EQ_INT(log_count, 0);
  etrt_log_set_level(ETRT_LOG_INFO);
  etrt_log(ETRT_LOG_INFO, "shown %d", 1);
  CHECK_EQ_INT(log_count, 1);
  CHECK(strcmp(log_last, "shown 1") == 0);
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(ETRT_LOG_WARN);
}

static void test_dtype_and_device_names(void) {
  CHECK_EQ_INT(etrt_dtype_size(ETRT_DTYPE_BFLOAT16), 2);
  CHECK_EQ_INT(etrt_dtype_from_name("uint64"), ETRT_DTYPE_UINT64);
  CHECK_EQ_INT(etrt_dtype_from_name("complex64"), ETRT_DTYPE_INVALID);
  etrt_device d;
  CHECK_EQ_INT(etrt_device_parse("cuda:12", &d), 0);
  CHECK_EQ_INT(d.index, 12);
  CHECK_EQ_INT(etrt_device_parse("cuda:", &d), -1);
  CHECK_EQ_INT(etrt_device_parse("cuda:1x", &d), -1);
  CHECK_EQ_INT(etrt_device_parse("gpu", &d), -1);
  char buf[16];
  CHECK(strcmp(etrt_device_format((etrt_device){ETRT_DEVICE_CUDA, 3}, buf, sizeof buf), "cuda:3") ==
        0);
}

static void test_file_write_and_map(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/f.bin", etrt_test_tmpdir());
  CHECK_OK(etrt_file_write_atomic(path, "hello", 5));
  etrt_file_map map;
  CHECK_OK(etrt_file_map_open(path, &map));
  CHECK_EQ_INT(map.size, 5);
  CHECK(memcmp(map.data, "hello", 5) == 0);
  etrt_file_map_close(&map);
  CHECK_FAILS(etrt_file_map_open("/nonexistent/x.pte", &map), ETRT_ERROR_IO, "/nonexistent/x.pte");
  CHECK_FAILS(etrt_file_write_atomic("/nonexistent/dir/x", "a", 1), ETRT_ERROR_IO,
              "/nonexistent/dir/x");
}

int main(void) {
  RUN_TEST(test_sha256_known_answers);
  RUN_TEST(test_sha256_bulk_and_extensions);
  RUN_TEST(test_errors_and_context);
  RUN_TEST(test_first_error_wins_during_cleanup);
  RUN_TEST(test_log_levels_and_sink);
  RUN_TEST(test_dtype_and_device_names);
  RUN_TEST(test_file_write_and_map);
  return TEST_EXIT();
}
