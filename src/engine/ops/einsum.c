/* Einsum(equation, inputs...): the equation is parsed once into terms (einsum.h);
 * the shapes make the plan. Without "->" the output is the ellipsis dims then the
 * letters used once, in ASCII order (as NumPy). */
#include "engine/ops/einsum.h"

#include <string.h>

#include "engine/ops/op_check.h"

static etrt_status etrt_einsum_prepare(const etrt_node *node, void *state) {
  etrt_einsum_state *s = state;
  memset(s, 0, sizeof *s);
  const char *eq = etrt_node_attribute_string(node, "equation", NULL);
  if (eq == NULL)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "the equation attribute is required");
  int32_t term = 0;
  for (size_t i = 0; eq[i] != '\0'; ++i) {
    char ch = eq[i];
    if (ch == ' ') continue;
    if (ch == ',' || (ch == '-' && eq[i + 1] == '>')) {
      if (s->explicit_output || (ch == ',' && term + 1 >= ETRT_EINSUM_MAX_INPUTS))
        return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                             "equation '%s': at most %d inputs and one output", eq,
                             ETRT_EINSUM_MAX_INPUTS);
      if (ch == '-') {
        s->explicit_output = 1;
        ++i;
        term = ETRT_EINSUM_MAX_INPUTS;
        s->num_terms = s->num_terms > 0 ? s->num_terms : 1;
        continue;
      }
      ++term;
      s->num_terms = term + 1;
      continue;
    }
    int8_t code;
    if (ch == '.' && eq[i + 1] == '.' && eq[i + 2] == '.') {
      code = ETRT_EINSUM_ELLIPSIS;
      i += 2;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      code = (int8_t)ch;
    } else {
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "equation '%s': '%c' at offset %zu is not a letter, ',', '->' or '...'",
                           eq, ch, i);
    }
    if (s->term_length[term] >= ETRT_EINSUM_MAX_TERM)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "equation '%s': a term over %d labels", eq,
                           ETRT_EINSUM_MAX_TERM);
    s->terms[term][s->term_length[term]++] = code;
    if (term < ETRT_EINSUM_MAX_INPUTS && term + 1 > s->num_terms) s->num_terms = term + 1;
  }
  if (s->num_terms == 0) s->num_terms = 1;
  return ETRT_OK;
}

/* Label slots: letters by character, ellipsis dim e at 128 + e. */
#define ETRT_EINSUM_CODES (128 + ETRT_MAX_RANK)

etrt_status etrt_einsum_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_einsum_plan *plan) {
  const etrt_einsum_state *s = node->state;
  memset(plan, 0, sizeof *plan);
  if ((int32_t)node->num_inputs != s->num_terms || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the equation has %d input term(s), the node %u inputs (and 1 output)",
                         s->num_terms, node->num_inputs);
  int64_t size[ETRT_EINSUM_CODES];
  int32_t uses[ETRT_EINSUM_CODES] = {0};
  int32_t labels[ETRT_EINSUM_MAX_INPUTS][ETRT_MAX_RANK];
  int32_t ell = 0;
  for (int32_t c = 0; c < ETRT_EINSUM_CODES; ++c) size[c] = -1;
  for (int32_t i = 0; i < s->num_terms; ++i) {
    int has = 0;
    for (int32_t k = 0; k < s->term_length[i]; ++k) has += s->terms[i][k] == ETRT_EINSUM_ELLIPSIS;
    int32_t letters = s->term_length[i] - has, rank = inputs[i].rank;
    if (has > 1 || (has ? rank < letters : rank != letters))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input %d has rank %d, its term names %d dims%s", (int)i, (int)rank,
                           (int)letters, has ? " and an ellipsis" : "");
    if (has && rank - letters > ell) ell = rank - letters;
  }
  for (int32_t i = 0; i < s->num_terms; ++i) {
    int32_t d = 0, m = inputs[i].rank - (s->term_length[i] - 1);
    for (int32_t k = 0; k < s->term_length[i]; ++k) {
      if (s->terms[i][k] != ETRT_EINSUM_ELLIPSIS) {
        labels[i][d++] = s->terms[i][k];
        continue;
      }
      for (int32_t e = 0; e < m; ++e) labels[i][d++] = 128 + ell - m + e;
    }
    for (d = 0; d < inputs[i].rank; ++d) {
      int32_t c = labels[i][d];
      int64_t n = inputs[i].dims[d];
      ++uses[c];
      if (size[c] < 0 || (c >= 128 && size[c] == 1)) {
        if (size[c] < 0 || n != 1) size[c] = n;
      } else if (size[c] != n && !(c >= 128 && n == 1)) {
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "label '%c' has size %lld in input %d and %lld elsewhere",
                             c < 128 ? (char)c : '.', (long long)n, (int)i, (long long)size[c]);
      }
    }
  }
  int32_t out[ETRT_EINSUM_CODES], out_rank = 0;
  if (s->explicit_output) {
    const int8_t *t = s->terms[ETRT_EINSUM_MAX_INPUTS];
    for (int32_t k = 0; k < s->term_length[ETRT_EINSUM_MAX_INPUTS]; ++k) {
      if (t[k] == ETRT_EINSUM_ELLIPSIS) {
        for (int32_t e = 0; e < ell; ++e) out[out_rank++] = 128 + e;
      } else if (uses[(int32_t)t[k]] == 0) {
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "output label '%c' names no input dim", t[k]);
      } else {
        out[out_rank++] = t[k];
      }
    }
  } else {
    for (int32_t e = 0; e < ell; ++e) out[out_rank++] = 128 + e;
    for (int32_t c = 0; c < 128; ++c)
      if (uses[c] == 1) out[out_rank++] = c;
  }
  if (out_rank > ETRT_MAX_RANK)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "the output would have rank %d",
                         (int)out_rank);
  int32_t is_out[ETRT_EINSUM_CODES] = {0}, sum[ETRT_EINSUM_MAX_LABELS], sum_rank = 0;
  for (int32_t a = 0; a < out_rank; ++a) is_out[out[a]] = a + 1;
  for (int32_t c = 0; c < ETRT_EINSUM_CODES; ++c) {
    if (uses[c] == 0 || is_out[c]) continue;
    if (sum_rank == ETRT_EINSUM_MAX_LABELS)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "more than %d summed labels",
                           ETRT_EINSUM_MAX_LABELS);
    sum[sum_rank++] = c;
  }
  plan->inputs = s->num_terms;
  plan->out_rank = out_rank;
  plan->sum_rank = sum_rank;
  plan->sum_count = 1;
  for (int32_t a = 0; a < out_rank; ++a) plan->out_dims[a] = size[out[a]] < 0 ? 1 : size[out[a]];
  for (int32_t a = 0; a < sum_rank; ++a) {
    plan->sum_dims[a] = size[sum[a]];
    plan->sum_count *= size[sum[a]];
  }
  for (int32_t i = 0; i < s->num_terms; ++i) {
    int64_t stride = 1;
    for (int32_t d = inputs[i].rank - 1; d >= 0; --d) {
      int32_t c = labels[i][d];
      /* a broadcast ellipsis dim of size 1 repeats its one element */
      int64_t step = inputs[i].dims[d] == 1 && size[c] != 1 ? 0 : stride;
      if (is_out[c]) {
        plan->out_strides[i][is_out[c] - 1] += step;
      } else {
        for (int32_t a = 0; a < sum_rank; ++a)
          if (sum[a] == c) plan->sum_strides[i][a] += step;
      }
      stride *= inputs[i].dims[d];
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_einsum_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  static const etrt_dtype allowed[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", inputs[i].dtype, allowed));
    if (inputs[i].dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "inputs must share one type");
  }
  etrt_einsum_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_einsum_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = plan.out_rank;
  for (int32_t a = 0; a < plan.out_rank; ++a) outputs[0].dims[a] = plan.out_dims[a];
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_einsum = {.op_type = "Einsum",
                                               .state_size = sizeof(etrt_einsum_state),
                                               .prepare = etrt_einsum_prepare,
                                               .infer = etrt_einsum_infer,
                                               .cuda_supports = etrt_op_supports_all};

const etrt_op_def *const etrt_ops_einsum[] = {&etrt_op_def_einsum, NULL};
