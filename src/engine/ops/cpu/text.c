/* CPU kernel of TfIdfVectorizer (text.h). */
#include "engine/op.h"
#include "engine/ops/text.h"

static etrt_status etrt_cpu_tfidf(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_tfidf_plan plan;
  etrt_tfidf_tables tables;
  ETRT_RETURN_IF_ERROR(etrt_tfidf_plan_make(node, inputs, &plan, &tables));
  for (int64_t r = 0; r < plan.rows; ++r)
    etrt_tfidf_row(&plan, &tables, inputs[0].data, r, outputs[0].data);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_text[] = {
    {"TfIdfVectorizer", etrt_cpu_tfidf},
    {NULL, NULL},
};
