"""A small BERT-like encoder (bench/cpu_models.py's, 2 layers of 64 features) quantized by
onnxruntime's tools as bench/real_models.py quantizes the 12-layer one (quantize_dynamic;
quantize_static in the QDQ and QOperator formats, 7-bit per-channel weights, random
calibration), built by etrt and compared with onnxruntime's default (optimised) CPU session
on random token ids: the argmax of every token's features must agree on >= 99% of the rows.

onnxruntime's optimised session runs the static models as its integer kernels (QGemm,
QLinearMatMul, QLinearAdd, QLinearMul, QLinearSoftmax; the QDQ groups fused into them)
and its float LayerNormalization and Erf between them, and the dynamic one as
DynamicQuantizeMatMul, SkipLayerNormalization, FusedMatMul, Softmax, MatMul and Gelu;
etrt computes the same arithmetic (docs/cpu-kernels.md, "Agreement with onnxruntime"), so
every output of every variant is the same bits. The float operators' own tests follow."""

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
    # Integer kernels and float operators computed as onnxruntime computes them.
    assert identical == rows, (kind, identical, rows)


def _single_node_bits(tmp_path, run_tool, nodes, inputs, initializers, optimised):
    """etrt's outputs and onnxruntime's (optimised session or not) for one small graph."""
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, v.shape) for n, v in inputs],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "g.onnx")
    onnx.save(model, path)
    pte = tmp_path / "g.pte"
    run_tool("build", path, "-o", pte, "--device", "cpu")
    args = []
    for name, value in inputs:
        np.save(tmp_path / (name + ".npy"), value)
        args += ["--input", tmp_path / (name + ".npy")]
    run_tool("run", pte, *args, "--output-dir", tmp_path / "out")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    if not optimised:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return np.load(tmp_path / "out" / "output_0.npy"), session.run(None, dict(inputs))[0]


@pytest.mark.parametrize("rows,width", [(1, 5), (13, 64), (19, 768), (9, 100)])
def test_residual_layer_norm_is_onnxruntimes_skip_layer_norm(rows, width, tmp_path, run_tool):
    """Add + LayerNormalization: onnxruntime's optimised session runs it as its
    SkipLayerNormalization kernel (Welford's statistics), etrt as EtrtAddLayerNorm; the
    same bits for row counts that do not fill etrt's eight lanes and widths that do not
    fill its tiles."""
    from onnx import helper

    rng = np.random.default_rng(rows * width)
    a = (rng.standard_normal((1, rows, width)) * 3 + 1).astype(np.float32)
    b = rng.standard_normal((1, rows, width)).astype(np.float32)
    scale = (1 + 0.1 * rng.standard_normal(width)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(width)).astype(np.float32)
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)]
    got, want = _single_node_bits(tmp_path, run_tool, nodes, [("a", a), ("b", b)],
                                  [("scale", scale), ("bias", bias)], optimised=True)
    assert np.array_equal(got, want), int(np.sum(got != want))


@pytest.mark.parametrize("shape", [(3, 7), (2, 5, 32), (4, 129), (1, 2, 8, 1000)])
def test_softmax_is_mlas_softmax(shape, tmp_path, run_tool):
    """Softmax over the last axis: MLAS's exponential and eight-lane float sum, the same
    bits as onnxruntime, with a tail of fewer than eight elements and rows of thousands."""
    from onnx import helper

    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 4).astype(np.float32)
    got, want = _single_node_bits(tmp_path, run_tool, [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
                                  [("x", x)], [], optimised=False)
    assert np.array_equal(got, want), int(np.sum(got != want))
    assert np.allclose(got.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("shape,axis", [((1, 16, 4, 70), 1), ((2, 5, 300), 1), ((3, 9, 2, 2), 0)])
def test_softmax_over_a_middle_axis_is_mlas_softmax(shape, axis, tmp_path, run_tool):
    """Softmax over another axis than the last (a detector's box distributions): etrt runs
    it down blocks of columns, onnxruntime transposes it to rows; the same bits, with
    column blocks that do not fill etrt's 64 and axes shorter and longer than 8."""
    from onnx import helper

    x = (np.random.default_rng(len(shape) + axis).standard_normal(shape) * 4).astype(np.float32)
    got, want = _single_node_bits(tmp_path, run_tool, [helper.make_node("Softmax", ["x"], ["y"], axis=axis)],
                                  [("x", x)], [], optimised=False)
    assert np.array_equal(got, want), int(np.sum(got != want))
    assert np.allclose(got.sum(axis), 1, atol=1e-5)


@pytest.mark.parametrize("a_shape,b_shape", [((1, 4, 32, 16), (1, 4, 16, 32)), ((2, 3, 5, 8), (2, 3, 8, 6)),
                                             ((1, 2, 64, 256), (1, 2, 256, 64))])
def test_product_of_computed_operands_is_mlas_order(a_shape, b_shape, tmp_path, run_tool):
    """MatMul of two inputs (attention's products): each element a chain of fused
    multiply-adds in order of k, as MLAS's SGEMM sums it (K up to its K block)."""
    from onnx import helper

    rng = np.random.default_rng(7)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got, want = _single_node_bits(tmp_path, run_tool, [helper.make_node("MatMul", ["a", "b"], ["y"])],
                                  [("a", a), ("b", b)], [], optimised=False)
    assert np.array_equal(got, want), int(np.sum(got != want))
