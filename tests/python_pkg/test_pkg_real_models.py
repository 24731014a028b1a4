"""Small stand-ins for the real models of bench/real_models.py, built by etrt and compared
with onnxruntime on the same inputs (CPU, and a simulated GPU for cuda:0).

- A voice-activity model shaped like silero VAD's: an If on the sample rate (a graph
  input, so both branches are planned) around a convolution, an LSTM whose initial state
  is the state input, and a classifier; inside each branch an If on the convolution's
  output size whose branches differ in rank (silero's `squeeze(-1)`), which only the
  folding of that inner If at build time makes plannable. The state is carried across
  calls and the rate switched between them.
- A CRNN text recogniser exported from PyTorch: convolutions, then a bidirectional LSTM
  or GRU over the columns and a per-column classifier."""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OPSET = 17
CHUNK, HIDDEN, FEATURES = 64, 8, 8


def _const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype), name))


def _vad_branch(tag, rng):
    """One rate's network over the captured `input` and `state`."""
    def w(name, shape, scale=0.5):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), tag + name)

    p = tag
    # Which rank the squeeze-like If returns depends on the convolution's output length:
    # 1 squeezes the time axis away (rank 2), else it stays (rank 3), as in silero VAD.
    squeeze = helper.make_graph(
        [_const(p + "ax", [2]), helper.make_node("Squeeze", [p + "r", p + "ax"], [p + "sq"])],
        p + "then", [], [helper.make_tensor_value_info(p + "sq", TensorProto.FLOAT, None)])
    keep = helper.make_graph(
        [helper.make_node("Identity", [p + "r"], [p + "id"])],
        p + "else", [], [helper.make_tensor_value_info(p + "id", TensorProto.FLOAT, None)])
    nodes = [
        _const(p + "one_axis", [1]),
        helper.make_node("Unsqueeze", ["input", p + "one_axis"], [p + "x3"]),
        helper.make_node("Conv", [p + "x3", p + "wc", p + "bc"], [p + "c"], strides=[16]),
        helper.make_node("Relu", [p + "c"], [p + "r"]),
        helper.make_node("Shape", [p + "r"], [p + "shape"]),
        _const(p + "two", 2),
        helper.make_node("Gather", [p + "shape", p + "two"], [p + "len"], axis=0),
        _const(p + "one", 1),
        helper.make_node("Equal", [p + "len", p + "one"], [p + "is_one"]),
        helper.make_node("If", [p + "is_one"], [p + "feat"], then_branch=squeeze, else_branch=keep),
        helper.make_node("Transpose", [p + "feat"], [p + "seq"], perm=[2, 0, 1]),
        _const(p + "i0", [0]),
        _const(p + "i1", [1]),
        helper.make_node("Gather", ["state", p + "i0"], [p + "h0"], axis=0),
        helper.make_node("Gather", ["state", p + "i1"], [p + "c0"], axis=0),
        helper.make_node("LSTM", [p + "seq", p + "W", p + "R", p + "B", "", p + "h0", p + "c0"],
                         ["", p + "hn", p + "cn"], hidden_size=HIDDEN),
        helper.make_node("Concat", [p + "hn", p + "cn"], [p + "stateN"], axis=0),
        _const(p + "z", [0]),
        helper.make_node("Squeeze", [p + "hn", p + "z"], [p + "h2"]),
        helper.make_node("Gemm", [p + "h2", p + "wd", p + "bd"], [p + "logit"], transB=1),
        helper.make_node("Sigmoid", [p + "logit"], [p + "prob"]),
    ]
    inits = [w("wc", (FEATURES, 1, 16)), w("bc", (FEATURES,), 0.1), w("W", (1, 4 * HIDDEN, FEATURES)),
             w("R", (1, 4 * HIDDEN, HIDDEN)), w("B", (1, 8 * HIDDEN), 0.1), w("wd", (1, HIDDEN)),
             w("bd", (1,), 0.1)]
    return helper.make_graph(
        nodes, tag + "net", [],
        [helper.make_tensor_value_info(p + "prob", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info(p + "stateN", TensorProto.FLOAT, [2, 1, HIDDEN])], inits)


def vad_model():
    rng = np.random.default_rng(21)
    nodes = [
        _const("rate16k", 16000),
        helper.make_node("Equal", ["sr", "rate16k"], ["is16k"]),
        helper.make_node("If", ["is16k"], ["if_output", "if_state"], then_branch=_vad_branch("k16_", rng),
                         else_branch=_vad_branch("k8_", rng)),
        # silero's exporter leaves these: dropping them moves the graph outputs onto the
        # If, whose fold then leaves them behind on dead nodes.
        helper.make_node("Identity", ["if_output"], ["output"]),
        helper.make_node("Identity", ["if_state"], ["stateN"]),
    ]
    graph = helper.make_graph(
        nodes, "vad",
        # The length is left open, as silero's is (onnx's inference would otherwise
        # check the squeezing branch, which this length never takes, and refuse it).
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, "samples"]),
         helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, HIDDEN]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("stateN", TensorProto.FLOAT, [2, 1, HIDDEN])])
    # IR version 8 is opset 17's: a newer onnx would stamp its own, which an older
    # onnxruntime refuses to load.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def _run(run_tool, pte, feeds, folder):
    folder.mkdir(exist_ok=True)
    args = []
    for name, value in feeds.items():
        np.save(folder / (name + ".npy"), value)
        args += ["--input", folder / (name + ".npy")]
    run_tool("run", pte, *args, "--output-dir", folder / "out")
    outputs = []
    while (folder / "out" / ("output_%d.npy" % len(outputs))).exists():
        outputs.append(np.load(folder / "out" / ("output_%d.npy" % len(outputs))))
    return outputs


@pytest.fixture
def device_env(request, monkeypatch):
    """cuda:0 runs on one simulated GPU, or on the real one with ETRT_TEST_REAL_GPU=1."""
    if request.param == "cuda:0":
        if os.environ.get("ETRT_TEST_REAL_GPU") == "1":
            monkeypatch.delenv("ETRT_DEVICE", raising=False)
        else:
            monkeypatch.setenv("ETRT_DEVICE", "sim:1")
    else:
        monkeypatch.setenv("ETRT_DEVICE", "cpu")
    return request.param


@pytest.mark.parametrize("device_env", ["cpu", "cuda:0"], indirect=True)
@pytest.mark.parametrize("rate_given", [False, True])
def test_vad_like_state_across_calls(rate_given, device_env, tmp_path, run_tool):
    path = str(tmp_path / "vad.onnx")
    onnx.save(vad_model(), path)
    pte = tmp_path / "vad.pte"
    # Without the rate, sr is known only when a call runs: both branches are planned, and
    # each one's inner If is folded there. With it, the outer If is folded at build time.
    flags = ["--shape-values", "sr:16000"] if rate_given else []
    run_tool("build", path, "-o", pte, "--device", device_env, "--shape", "input:1x%d" % CHUNK, *flags)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    state_etrt = state_ort = np.zeros((2, 1, HIDDEN), np.float32)
    rates = [16000] * 4 if rate_given else [16000, 16000, 8000, 16000, 8000]
    for call, rate in enumerate(rates):
        chunk = (rng.standard_normal((1, CHUNK)) * 0.5).astype(np.float32)
        sr = np.array(rate, np.int64)
        want = session.run(None, {"input": chunk, "state": state_ort, "sr": sr})
        got = _run(run_tool, pte, {"input": chunk, "state": state_etrt, "sr": sr}, tmp_path / ("c%d" % call))
        assert len(got) == 2
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
        state_etrt, state_ort = got[1], want[1]


def _crnn(cell):
    torch = pytest.importorskip("torch")
    from torch import nn

    class CRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.cnn = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d((2, 1)))
            self.rnn = getattr(nn, cell)(16 * 4, 24, bidirectional=True)
            self.fc = nn.Linear(48, 12)

        def forward(self, x):
            f = self.cnn(x)  # [batch, 16, 4, width / 2]
            b, c, h, w = f.shape
            seq = f.reshape(b, c * h, w).permute(2, 0, 1)  # [columns, batch, features]
            out, _ = self.rnn(seq)
            return self.fc(out).log_softmax(-1)

    torch.manual_seed(0)
    model = CRNN().eval()
    with torch.no_grad():
        model.cnn[4].running_mean.uniform_(-0.2, 0.2)
        model.cnn[4].running_var.uniform_(0.5, 1.5)
    return torch, model


@pytest.mark.parametrize("device_env", ["cpu", "cuda:0"], indirect=True)
@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_crnn_matches_onnxruntime(cell, device_env, tmp_path, run_tool):
    torch, model = _crnn(cell)
    path = str(tmp_path / "crnn.onnx")
    x = torch.rand(2, 1, 16, 40)
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=OPSET,
                      dynamo=False)
    assert cell in {n.op_type for n in onnx.load(path).graph.node}
    pte = tmp_path / "crnn.pte"
    run_tool("build", path, "-o", pte, "--device", device_env)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for i in range(2):
        feed = np.random.default_rng(i).random((2, 1, 16, 40)).astype(np.float32)
        want = session.run(None, {"x": feed})[0]
        got = _run(run_tool, pte, {"x": feed}, tmp_path / ("r%d" % i))[0]
        assert got.shape == want.shape == (20, 2, 12)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert np.array_equal(got.argmax(-1), want.argmax(-1))
