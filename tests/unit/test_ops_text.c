/* TfIdfVectorizer on the CPU: counts worked by hand for skips, levels and modes, and
 * every refusal. */
#include "engine/op.h"
#include "op_harness.h"

/* The pool of the ONNX examples: unigrams 2 3 5 4, bigrams (5 6) (7 8) (6 7). */
#define TT_POOL OH_INTS("pool_int64s", 10, 2, 3, 5, 4, 5, 6, 7, 8, 6, 7)
#define TT_COUNTS OH_INTS("ngram_counts", 2, 0, 4)
#define TT_INDEXES OH_INTS("ngram_indexes", 7, 0, 1, 2, 3, 4, 5, 6)

#define TT_TOKENS OH_I32(1, (12), 1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8)

static void test_counts(void) {
  float y[4096 / 4];
  oh_output info[1];
  /* adjacent bigrams only: (7 8), (6 7) and (5 6) once each */
  CHECK_OK(oh_run("TfIdfVectorizer", 1, (oh_value[]){TT_TOKENS}, 7,
                  (etrt_attribute[]){OH_INT("min_gram_length", 2), OH_INT("max_gram_length", 2),
                                     OH_INT("max_skip_count", 0), OH_STRING("mode", "TF"), TT_POOL,
                                     TT_COUNTS, TT_INDEXES},
                  1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT32);
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK_EQ_INT(info[0].dims[0], 7);
  OH_CHECK_FLOATS(y, ((double[]){0, 0, 0, 0, 1, 1, 1}), 7, 0);
  /* unigrams counted once, bigrams with up to 5 tokens skipped: 3 appears 3 times,
   * 5 once; (7 8) adjacent; (6 7) at distance 1 and 2 ... */
  CHECK_OK(oh_run("TfIdfVectorizer", 1, (oh_value[]){TT_TOKENS}, 7,
                  (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                     OH_INT("max_skip_count", 5), OH_STRING("mode", "TF"), TT_POOL,
                                     TT_COUNTS, TT_INDEXES},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 3, 1, 0, 1, 3, 1}), 7, 0);
  /* rows of int64 tokens; IDF with weights gives the column's weight where counted */
  CHECK_OK(
      oh_run("TfIdfVectorizer", 1, (oh_value[]){OH_I64(2, (2, 3), 5, 6, 2, 4, 4, 3)}, 7,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "IDF"), TT_POOL, TT_COUNTS, TT_INDEXES,
                                (etrt_attribute){.name = "weights",
                                                 .kind = ETRT_ATTRIBUTE_FLOATS,
                                                 .count = 7,
                                                 .floats = (const float[]){1, 2, 3, 4, 5, 6, 7}}},
             1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  OH_CHECK_FLOATS(y, ((double[]){1, 0, 3, 0, 5, 0, 0, 0, 2, 0, 4, 0, 0, 0}), 14, 0);
  /* TFIDF multiplies the counts by the weights; a column may take several n-grams */
  CHECK_OK(
      oh_run("TfIdfVectorizer", 1, (oh_value[]){OH_I64(1, (4), 3, 3, 2, 9)}, 7,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 1),
                                OH_STRING("mode", "TFIDF"), OH_INTS("pool_int64s", 2, 2, 3),
                                OH_INTS("ngram_counts", 1, 0), OH_INTS("ngram_indexes", 2, 1, 1),
                                (etrt_attribute){.name = "weights",
                                                 .kind = ETRT_ATTRIBUTE_FLOATS,
                                                 .count = 2,
                                                 .floats = (const float[]){0.5f, 2}}},
             1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(y, ((double[]){0, 6}), 2, 0);
}

static void test_refusals(void) {
  const char *op = "TfIdfVectorizer";
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){TT_TOKENS}, 7,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "BM25"), TT_POOL, TT_COUNTS, TT_INDEXES,
                                OH_INT("max_skip_count", 0)},
             1, NULL, NULL),
      op, "mode 'BM25'");
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){TT_TOKENS}, 6,
             (etrt_attribute[]){OH_INT("min_gram_length", 3), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "TF"), TT_POOL, TT_COUNTS, TT_INDEXES},
             1, NULL, NULL),
      op, "min_gram_length <= max_gram_length");
  OH_CHECK_REFUSED(oh_run(op, 1, (oh_value[]){TT_TOKENS}, 6,
                          (etrt_attribute[]){OH_INT("min_gram_length", 1),
                                             OH_INT("max_gram_length", 2), OH_STRING("mode", "TF"),
                                             TT_POOL, OH_INTS("ngram_counts", 2, 0, 5), TT_INDEXES},
                          1, NULL, NULL),
                   op, "ngram_counts[1] does not start a whole number of 2-grams");
  OH_CHECK_REFUSED(oh_run(op, 1, (oh_value[]){TT_TOKENS}, 6,
                          (etrt_attribute[]){OH_INT("min_gram_length", 1),
                                             OH_INT("max_gram_length", 2), OH_STRING("mode", "TF"),
                                             TT_POOL, TT_COUNTS, OH_INTS("ngram_indexes", 2, 0, 1)},
                          1, NULL, NULL),
                   op, "ngram_indexes gives 2 columns for 7 n-grams");
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){TT_TOKENS}, 6,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "TF"), TT_POOL, TT_COUNTS,
                                OH_INTS("ngram_indexes", 7, 0, 1, 2, 3, 4, 5, -6)},
             1, NULL, NULL),
      op, "ngram_indexes[6] is -6");
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){TT_TOKENS}, 7,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "TFIDF"), TT_POOL, TT_COUNTS, TT_INDEXES,
                                (etrt_attribute){.name = "weights",
                                                 .kind = ETRT_ATTRIBUTE_FLOATS,
                                                 .count = 1,
                                                 .floats = (const float[]){1}}},
             1, NULL, NULL),
      op, "weights");
  OH_CHECK_REFUSED(oh_run(op, 1, (oh_value[]){TT_TOKENS}, 6,
                          (etrt_attribute[]){OH_INT("min_gram_length", 1),
                                             OH_INT("max_gram_length", 2), OH_STRING("mode", "TF"),
                                             TT_COUNTS, TT_INDEXES, OH_STRING("pool_strings", "a")},
                          1, NULL, NULL),
                   op, "pool_strings");
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){OH_F32(1, (2), 1, 2)}, 6,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "TF"), TT_POOL, TT_COUNTS, TT_INDEXES},
             1, NULL, NULL),
      op, "X");
  OH_CHECK_REFUSED(
      oh_run(op, 1, (oh_value[]){OH_I32(3, (1, 1, 1), 1)}, 6,
             (etrt_attribute[]){OH_INT("min_gram_length", 1), OH_INT("max_gram_length", 2),
                                OH_STRING("mode", "TF"), TT_POOL, TT_COUNTS, TT_INDEXES},
             1, NULL, NULL),
      op, "[N, C]");
}

/* The CUDA kernel carries the pool in its arguments: a larger pool stays on the CPU. */
static void test_cuda_predicate(void) {
  static int64_t pool[1025];
  for (int i = 0; i < 1025; ++i) pool[i] = i;
  etrt_attribute attributes[] = {OH_INT("min_gram_length", 1),
                                 OH_INT("max_gram_length", 1),
                                 OH_STRING("mode", "TF"),
                                 OH_INTS("ngram_counts", 1, 0),
                                 OH_INTS("ngram_indexes", 1, 0),
                                 {.name = "pool_int64s", .kind = ETRT_ATTRIBUTE_INTS, .count = 1}};
  etrt_node node = {.op_type = "TfIdfVectorizer",
                    .name = "tfidf",
                    .num_inputs = 1,
                    .num_outputs = 1,
                    .num_attributes = 6,
                    .attributes = attributes};
  etrt_op_resolve(&node);
  etrt_tensor x = {.dtype = ETRT_DTYPE_INT64, .rank = 1, .dims = {4}};
  attributes[5].ints = pool;
  CHECK(etrt_op_cuda_supports(&node, &x));
  attributes[5].count = 1025;
  attributes[3].ints = (const int64_t[]){0};
  attributes[4] = (etrt_attribute){
      .name = "ngram_indexes", .kind = ETRT_ATTRIBUTE_INTS, .count = 1025, .ints = pool};
  CHECK(!etrt_op_cuda_supports(&node, &x));
  attributes[5].count = 600;
  CHECK(!etrt_op_cuda_supports(&node, &x)); /* 600 columns */
  attributes[5].count = 512;
  attributes[4].count = 512;
  CHECK(etrt_op_cuda_supports(&node, &x));
}

int main(void) {
  RUN_TEST(test_counts);
  RUN_TEST(test_refusals);
  RUN_TEST(test_cuda_predicate);
  return TEST_EXIT();
}
