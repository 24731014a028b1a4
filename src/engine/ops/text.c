/* TfIdfVectorizer: attribute checks, shape inference and the plan (text.h). */
#include "engine/ops/text.h"

#include <string.h>

#include "engine/ops/op_check.h"

/* An INTS attribute without copying it; NULL and 0 when absent. */
static etrt_status etrt_tfidf_ints(const etrt_node *node, const char *name, const int64_t **values,
                                   int64_t *count) {
  const etrt_attribute *a = etrt_node_attribute(node, name);
  *values = NULL;
  *count = 0;
  if (a == NULL) return ETRT_OK;
  if (a->kind != ETRT_ATTRIBUTE_INTS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s' must be ints", name);
  *values = a->ints;
  *count = a->count;
  return ETRT_OK;
}

etrt_status etrt_tfidf_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tfidf_plan *plan, etrt_tfidf_tables *tables) {
  if (node->num_inputs != 1 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 input and 1 output");
  const etrt_tensor *x = &inputs[0];
  static const etrt_dtype allowed[] = {ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "X", x->dtype, allowed));
  if (x->rank != 1 && x->rank != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "X must be [C] or [N, C]");
  if (etrt_node_attribute(node, "pool_strings") != NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "pool_strings is not supported");
  static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
  const char *mode = etrt_node_attribute_string(node, "mode", "");
  plan->mode = -1;
  for (int32_t i = 0; modes[i] != NULL; ++i)
    if (strcmp(mode, modes[i]) == 0) plan->mode = i;
  if (plan->mode < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "mode '%s' is not TF, IDF or TFIDF",
                         mode);
  int64_t min_n = etrt_node_attribute_int(node, "min_gram_length", 0);
  int64_t max_n = etrt_node_attribute_int(node, "max_gram_length", 0);
  plan->max_skip = etrt_node_attribute_int(node, "max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_n > ETRT_TFIDF_MAX_LEVELS || plan->max_skip < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "needs 1 <= min_gram_length <= max_gram_length <= %d and max_skip_count "
                         ">= 0",
                         ETRT_TFIDF_MAX_LEVELS);
  plan->min_n = (int32_t)min_n;
  plan->max_n = (int32_t)max_n;
  const int64_t *counts, *indexes;
  int64_t levels, num_indexes;
  ETRT_RETURN_IF_ERROR(etrt_tfidf_ints(node, "ngram_counts", &counts, &levels));
  ETRT_RETURN_IF_ERROR(etrt_tfidf_ints(node, "ngram_indexes", &indexes, &num_indexes));
  ETRT_RETURN_IF_ERROR(etrt_tfidf_ints(node, "pool_int64s", &tables->pool, &plan->pool_size));
  if (levels < 1 || levels > ETRT_TFIDF_MAX_LEVELS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "ngram_counts must give 1 to %d levels",
                         ETRT_TFIDF_MAX_LEVELS);
  plan->levels = (int32_t)levels;
  plan->grams = 0;
  for (int64_t l = 0; l < levels; ++l) {
    int64_t end = l + 1 < levels ? counts[l + 1] : plan->pool_size;
    if (counts[l] < 0 || counts[l] > end || end > plan->pool_size ||
        (end - counts[l]) % (l + 1) != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "ngram_counts[%lld] does not start a whole number of %lld-grams "
                           "within the pool of %lld",
                           (long long)l, (long long)(l + 1), (long long)plan->pool_size);
    plan->starts[l] = counts[l];
    plan->first_id[l] = plan->grams;
    plan->grams += (end - counts[l]) / (l + 1);
  }
  if (num_indexes < plan->grams)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "ngram_indexes gives %lld columns for %lld n-grams",
                         (long long)num_indexes, (long long)plan->grams);
  plan->width = 0;
  for (int64_t i = 0; i < num_indexes; ++i) {
    if (indexes[i] < 0 || indexes[i] >= ((int64_t)1 << 31))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "ngram_indexes[%lld] is %lld, out of range", (long long)i,
                           (long long)indexes[i]);
    if (indexes[i] + 1 > plan->width) plan->width = indexes[i] + 1;
  }
  tables->indexes = indexes;
  const etrt_attribute *weights = etrt_node_attribute(node, "weights");
  plan->weighted = weights != NULL;
  tables->weights = NULL;
  if (weights != NULL) {
    if (weights->kind != ETRT_ATTRIBUTE_FLOATS || weights->count < plan->width)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "weights must give a float for each of the %lld columns",
                           (long long)plan->width);
    tables->weights = weights->floats;
  }
  plan->x_i64 = x->dtype == ETRT_DTYPE_INT64;
  plan->rows = x->rank == 2 ? x->dims[0] : 1;
  plan->length = x->dims[x->rank - 1];
  return ETRT_OK;
}

static etrt_status etrt_tfidf_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  etrt_tfidf_plan plan;
  etrt_tfidf_tables tables;
  ETRT_RETURN_IF_ERROR(etrt_tfidf_plan_make(node, inputs, &plan, &tables));
  outputs[0].dtype = ETRT_DTYPE_FLOAT32;
  outputs[0].rank = inputs[0].rank;
  if (inputs[0].rank == 2) outputs[0].dims[0] = plan.rows;
  outputs[0].dims[inputs[0].rank - 1] = plan.width;
  return ETRT_OK;
}

/* The CUDA kernel carries the pool, the columns and the weights as kernel arguments
 * (cuda/text.cu); larger vocabularies stay on the CPU. */
static int etrt_tfidf_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  etrt_tfidf_plan plan;
  etrt_tfidf_tables tables;
  if (etrt_tfidf_plan_make(node, inputs, &plan, &tables) != ETRT_OK) return 0;
  return plan.pool_size <= ETRT_TFIDF_CUDA_MAX_POOL && plan.grams <= ETRT_TFIDF_CUDA_MAX_COLUMNS &&
         plan.width <= ETRT_TFIDF_CUDA_MAX_COLUMNS;
}

static const etrt_op_def etrt_op_def_tfidf = {.op_type = "TfIdfVectorizer",
                                              .infer = etrt_tfidf_infer,
                                              .cuda_supports = etrt_tfidf_cuda_supports};

const etrt_op_def *const etrt_ops_text[] = {&etrt_op_def_tfidf, NULL};
