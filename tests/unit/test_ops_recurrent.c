/* RNN, GRU and LSTM on the CPU: values worked by hand, sequence_lens and
 * directions, and every refusal. */
#include "op_harness.h"

/* hidden 1, input 1, W = 1, R = 0.5, X = [1, 2, 3] (seq 3, batch 1), Relu: the
 * state runs 1, 2.5, 4.25. */
static void test_rnn_values(void) {
  float y[4096 / 4], yh[4096 / 4];
  const oh_value x = OH_F32(3, (3, 1, 1), 1, 2, 3);
  const oh_value w = OH_F32(3, (1, 1, 1), 1), r = OH_F32(3, (1, 1, 1), 0.5f);
  CHECK_OK(oh_run("RNN", 3, (oh_value[]){x, w, r}, 2,
                  (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Relu")}, 2,
                  (void *[]){y, yh}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2.5, 4.25}), 3, 1e-6);
  OH_CHECK_FLOATS(yh, ((double[]){4.25}), 1, 1e-6);
  /* reverse: 3, 2 + 1.5 = 3.5, 1 + 1.75 = 2.75; Y in time order */
  CHECK_OK(oh_run("RNN", 3, (oh_value[]){x, w, r}, 3,
                  (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Relu"),
                                     OH_STRING("direction", "reverse")},
                  2, (void *[]){y, yh}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){2.75, 3.5, 3}), 3, 1e-6);
  OH_CHECK_FLOATS(yh, ((double[]){2.75}), 1, 1e-6);
  /* clip 2 bounds the pre-activation: 1, min(2 + 0.5, 2) = 2, 2 */
  CHECK_OK(oh_run("RNN", 3, (oh_value[]){x, w, r}, 3,
                  (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Relu"),
                                     OH_FLOAT("clip", 2.0f)},
                  2, (void *[]){y, yh}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 2}), 3, 1e-6);
}

/* Batch of 2 with lengths 3 and 1, bidirectional: a stopped entry's Y steps are 0
 * and its final state is the one of its last step. */
static void test_rnn_lengths(void) {
  float y[4096 / 4], yh[4096 / 4];
  const oh_value x = OH_F32(3, (3, 2, 1), 1, 10, 2, 20, 3, 30);
  const oh_value w = OH_F32(3, (2, 1, 1), 1, 1), r = OH_F32(3, (2, 1, 1), 0.5f, 0.5f);
  CHECK_OK(
      oh_run("RNN", 5, (oh_value[]){x, w, r, OH_NONE, OH_I32(1, (2), 3, 1)}, 3,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Relu Relu"),
                                OH_STRING("direction", "bidirectional")},
             2, (void *[]){y, yh}, NULL));
  /* Y [seq 3, dirs 2, batch 2, 1]: forward entry 0 runs 1, 2.5, 4.25; entry 1 only
   * 10; reverse entry 0 runs 3, 3.5, 2.75 (stored at t = 2, 1, 0); entry 1: 10 */
  OH_CHECK_FLOATS(y, ((double[]){1, 10, 2.75, 10, 2.5, 0, 3.5, 0, 4.25, 0, 3, 0}), 12, 1e-6);
  OH_CHECK_FLOATS(yh, ((double[]){4.25, 10, 2.75, 10}), 4, 1e-6);
}

/* GRU, hidden 1, all weights 0 but the bias of h: z = r = 0.5, h~ = tanh(1),
 * h = 0.5 h~ + 0.5 h_prev. LSTM, all weights 0 but the c bias: i = f = o = 0.5,
 * c = 0.5 c + 0.5 tanh(1). */
static void test_gru_lstm_values(void) {
  float yh[4096 / 4], yc[4096 / 4];
  const oh_value x = OH_F32(3, (2, 1, 1), 0, 0);
  double t1 = tanh(1.0);
  CHECK_OK(oh_run("GRU", 4,
                  (oh_value[]){x, OH_F32(3, (1, 3, 1), 0, 0, 0), OH_F32(3, (1, 3, 1), 0, 0, 0),
                               OH_F32(2, (1, 6), 0, 0, 1, 0, 0, 0)},
                  1, (etrt_attribute[]){OH_INT("hidden_size", 1)}, 2, (void *[]){NULL, yh}, NULL));
  OH_CHECK_FLOATS(yh, ((double[]){0.75 * t1}), 1, 1e-6);
  double c1 = 0.5 * t1, c2 = 0.5 * c1 + 0.5 * t1;
  CHECK_OK(
      oh_run("LSTM", 4,
             (oh_value[]){x, OH_F32(3, (1, 4, 1), 0, 0, 0, 0), OH_F32(3, (1, 4, 1), 0, 0, 0, 0),
                          OH_F32(2, (1, 8), 0, 0, 0, 1, 0, 0, 0, 0)},
             1, (etrt_attribute[]){OH_INT("hidden_size", 1)}, 3, (void *[]){NULL, yh, yc}, NULL));
  OH_CHECK_FLOATS(yc, ((double[]){c2}), 1, 1e-6);
  OH_CHECK_FLOATS(yh, ((double[]){0.5 * tanh(c2)}), 1, 1e-6);
}

static void test_refusals(void) {
  const oh_value x = OH_F32(3, (1, 1, 1), 1);
  const oh_value w = OH_F32(3, (1, 1, 1), 1), r = OH_F32(3, (1, 1, 1), 1);
  OH_CHECK_REFUSED(oh_run("RNN", 3, (oh_value[]){x, w, r}, 0, NULL, 1, NULL, NULL), "RNN",
                   "hidden_size");
  OH_CHECK_REFUSED(
      oh_run("RNN", 3, (oh_value[]){x, w, r}, 2,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("direction", "sideways")}, 1,
             NULL, NULL),
      "RNN", "sideways");
  OH_CHECK_REFUSED(
      oh_run("RNN", 3, (oh_value[]){x, w, r}, 2,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_INT("layout", 2)}, 1, NULL, NULL),
      "RNN", "layout");
  OH_CHECK_REFUSED(
      oh_run("RNN", 3, (oh_value[]){x, w, r}, 2,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Swish")}, 1,
             NULL, NULL),
      "RNN", "Swish");
  OH_CHECK_REFUSED(
      oh_run("GRU", 3, (oh_value[]){x, w, r}, 2,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_STRING("activations", "Sigmoid")}, 1,
             NULL, NULL),
      "GRU", "fewer");
  OH_CHECK_REFUSED(oh_run("LSTM", 3, (oh_value[]){x, w, r}, 2,
                          (etrt_attribute[]){OH_INT("hidden_size", 1), OH_INT("input_forget", 1)},
                          1, NULL, NULL),
                   "LSTM", "input_forget");
  OH_CHECK_REFUSED(
      oh_run("RNN", 3, (oh_value[]){x, w, r}, 2,
             (etrt_attribute[]){OH_INT("hidden_size", 1), OH_FLOAT("clip", -1.0f)}, 1, NULL, NULL),
      "RNN", "clip");
  /* W is [dirs, gates * hidden, input]: an LSTM of hidden 1 needs [1, 4, 1] */
  OH_CHECK_REFUSED(oh_run("LSTM", 3, (oh_value[]){x, w, r}, 1,
                          (etrt_attribute[]){OH_INT("hidden_size", 1)}, 1, NULL, NULL),
                   "LSTM", "W");
  OH_CHECK_REFUSED(oh_run("RNN", 3, (oh_value[]){OH_F32(2, (1, 1), 1), w, r}, 1,
                          (etrt_attribute[]){OH_INT("hidden_size", 1)}, 1, NULL, NULL),
                   "RNN", "rank 3");
  OH_CHECK_REFUSED(oh_run("RNN", 2, (oh_value[]){x, w}, 1,
                          (etrt_attribute[]){OH_INT("hidden_size", 1)}, 1, NULL, NULL),
                   "RNN", "inputs");
  OH_CHECK_REFUSED(oh_run("RNN", 5, (oh_value[]){x, w, r, OH_NONE, OH_I64(1, (1), 1)}, 1,
                          (etrt_attribute[]){OH_INT("hidden_size", 1)}, 1, NULL, NULL),
                   "RNN", "sequence_lens");
  /* a length beyond the sequence fails the run */
  float y[4096 / 4];
  etrt_clear_error();
  CHECK(oh_run("RNN", 5, (oh_value[]){x, w, r, OH_NONE, OH_I32(1, (1), 2)}, 1,
               (etrt_attribute[]){OH_INT("hidden_size", 1)}, 1, (void *[]){y},
               NULL) == ETRT_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(etrt_last_error(), "RNN");
  CHECK_STR_CONTAINS(etrt_last_error(), "sequence_lens[0] is 2");
}

int main(void) {
  RUN_TEST(test_rnn_values);
  RUN_TEST(test_rnn_lengths);
  RUN_TEST(test_gru_lstm_values);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
