"""A small BERT-like encoder (bench/cpu_models.py's, 2 layers of 64 features) quantized by
onnxruntime's tools as bench/real_models.py quantizes the 12-layer one (quantize_dynamic;
quantize_static in the QDQ and QOperator formats, 7-bit per-channel weights, random
calibration), built by etrt and compared with onnxruntime's default (optimised) CPU session
on random token ids: the argmax of every token's features must agree on >= 99% of the rows.

onnxruntime's optimised session runs the static models as its integer kernels (QGemm,
QLinearMatMul, QLinearAdd, QLinearMul, QLinearSoftmax; the QDQ groups fused into them)
and its float LayerNormalization and Erf between them; etrt computes the same arithmetic
(docs/cpu-kernels.md, "Integer products"), so there every output is the same bits."""

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import cpu_models  # noqa: E402

SEQ, VOCAB, INPUTS = 32, 1000, 8


class _Reader(quantization.CalibrationDataReader):
    def __init__(self):
        rng = np.random.default_rng(99)
        self.feeds = iter([{"ids": rng.integers(0, VOCAB, (1, SEQ)).astype(np.int64)} for _ in range(2)])

    def get_next(self):
        return next(self.feeds, None)


@pytest.fixture(scope="module")
def float_model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bert") / "bert.onnx")
    cpu_models.export_bert(path, layers=2, hidden=64, heads=4, ff=256, seq=SEQ, vocab=VOCAB)
    return path


def _quantize(float_path, kind, folder):
    path = str(folder / ("bert_%s.onnx" % kind))
    if kind == "dynamic":
        quantization.quantize_dynamic(float_path, path, weight_type=quantization.QuantType.QInt8,
                                      reduce_range=True)
        return path
    from onnxruntime.quantization.shape_inference import quant_pre_process

    pre = str(folder / "bert.pre.onnx")
    quant_pre_process(float_path, pre)
    fmt = quantization.QuantFormat.QDQ if kind == "qdq" else quantization.QuantFormat.QOperator
    quantization.quantize_static(pre, path, _Reader(), quant_format=fmt,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8, per_channel=True,
                                 reduce_range=True)
    return path


@pytest.mark.parametrize("kind", ["dynamic", "qdq", "qoperator"])
def test_quantized_bert_agrees_with_onnxruntime(kind, float_model, tmp_path, run_tool):
    path = _quantize(float_model, kind, tmp_path)
    pte = tmp_path / "bert.pte"
    run_tool("build", path, "-o", pte, "--device", "cpu")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    agree = rows = identical = 0
    for i in range(INPUTS):
        ids = rng.integers(0, VOCAB, (1, SEQ)).astype(np.int64)
        want = session.run(None, {"ids": ids})[0]
        np.save(tmp_path / "ids.npy", ids)
        run_tool("run", pte, "--input", tmp_path / "ids.npy", "--output-dir", tmp_path / ("out%d" % i))
        got = np.load(tmp_path / ("out%d" % i) / "output_0.npy")
        assert got.shape == want.shape
        a, b = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
        agree += int(np.sum(np.argmax(a, 1) == np.argmax(b, 1)))
        identical += int(np.sum(np.all(a == b, axis=1)))
        rows += a.shape[0]
    assert agree / rows >= 0.99, (kind, agree / rows)
    if kind != "dynamic":
        # Integer kernels and float operators computed as onnxruntime computes them.
        assert identical == rows, (kind, identical, rows)
