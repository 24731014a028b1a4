"""Quantized models as onnxruntime's quantization tools make them, built and run by etrt
on the CPU and compared with onnxruntime on the same inputs.

Small float networks (a CNN, a transformer-like block and a self-attention block) are
written with onnx.helper, quantized with quantize_dynamic (DynamicQuantizeLinear,
MatMulInteger, ConvInteger) and quantize_static (QDQ, and the QOperator format:
QLinearConv, QLinearMatMul and the com.microsoft QLinearAdd, QLinearGlobalAveragePool,
QLinearSoftmax, QGemm; per-tensor and per-channel weights) with a tiny random calibration
reader. Over 128 rows, the top-1 class must agree on >= 99% of them and the values lie
within a few steps of the output's quantization (int8 products are exact, but float
rounding before a requantization may move a value by one step, and steps add up through
the layers), against onnxruntime run operator by operator (QDQ models: its optimised
session, which runs the groups as its QLinear* kernels, as etrt does); against the other
session, within its own distance from that. Weights are quantized to 7 bits (reduce_range), as onnxruntime
advises for processors without VNNI: its uint8 x int8 kernel there adds pairs of products
in saturating 16-bit arithmetic, which full-range weights can overflow, while etrt's
products are exact."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OPSET = 17
BATCH = 128  # rows: the top-1 agreement is over 128 random inputs


def _init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn_model(rng):
    """Conv-Relu, Conv-Relu with a residual Add, GlobalAveragePool, Flatten, Gemm."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Add", ["r1", "r2"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    inits = [_init(rng, "w1", (8, 3, 3, 3)), _init(rng, "b1", (8,), 0.1),
             _init(rng, "w2", (8, 8, 3, 3), 0.2), _init(rng, "b2", (8,), 0.1),
             _init(rng, "wf", (10, 8), 1.0), _init(rng, "bf", (10,), 0.1)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 3, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def mlp_model(rng):
    """A transformer-like block on [batch, tokens, 32]: MatMul + bias, Gelu (Erf form),
    MatMul back, residual, LayerNormalization, then a classifier over the mean token."""
    hidden, inner, classes = 32, 64, 10
    sqrt2 = numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Div", ["h1", "sqrt2"], ["g0"]),
        helper.make_node("Erf", ["g0"], ["g1"]),
        helper.make_node("Add", ["g1", "one"], ["g2"]),
        helper.make_node("Mul", ["h1", "g2"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["g"]),
        helper.make_node("MatMul", ["g", "w2"], ["o0"]),
        helper.make_node("Add", ["o0", "b2"], ["o1"]),
        helper.make_node("Add", ["o1", "x"], ["res"]),
        helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["ln"], axis=-1),
        helper.make_node("ReduceMean", ["ln"], ["pooled"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["pooled", "wc"], ["y0"]),
        helper.make_node("Add", ["y0", "bc"], ["y"]),
    ]
    inits = [_init(rng, "w1", (hidden, inner), 0.2), _init(rng, "b1", (inner,), 0.1),
             _init(rng, "w2", (inner, hidden), 0.15), _init(rng, "b2", (hidden,), 0.1),
             numpy_helper.from_array(np.ones(hidden, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(hidden, np.float32), "beta"),
             _init(rng, "wc", (hidden, classes), 0.5), _init(rng, "bc", (classes,), 0.1),
             sqrt2, one, half]
    graph = helper.make_graph(
        nodes, "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 8, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, classes])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def attention_model(rng):
    """Single-head self-attention on [batch, tokens, 16] (Q, K, V projections, scaled
    scores, Softmax, weighted sum), a residual, then a classifier over the mean token:
    quantize_static's QOperator format makes its Softmax a com.microsoft QLinearSoftmax."""
    hidden, tokens, classes = 16, 6, 10
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Mul", ["s0", "scale"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["ctx"]),
        helper.make_node("Add", ["ctx", "x"], ["res"]),
        helper.make_node("ReduceMean", ["res"], ["pooled"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["pooled", "wc"], ["y0"]),
        helper.make_node("Add", ["y0", "bc"], ["y"]),
    ]
    inits = [_init(rng, "wq", (hidden, hidden), 0.4), _init(rng, "wk", (hidden, hidden), 0.4),
             _init(rng, "wv", (hidden, hidden), 0.3), _init(rng, "wc", (hidden, classes), 0.5),
             _init(rng, "bc", (classes,), 0.1),
             numpy_helper.from_array(np.array(1 / np.sqrt(hidden), np.float32), "scale")]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, tokens, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, classes])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


class RandomReader(quantization.CalibrationDataReader):
    def __init__(self, shape, count=4, seed=7):
        rng = np.random.default_rng(seed)
        self.batches = iter([{"x": rng.standard_normal(shape).astype(np.float32)}
                             for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


def _quantize(kind, model, path, tmp_path, shape):
    float_path = str(tmp_path / "float.onnx")
    onnx.save(model, float_path)
    if kind == "dynamic":
        quantization.quantize_dynamic(float_path, path, weight_type=quantization.QuantType.QInt8,
                                      reduce_range=True)
        return
    # "-pc": per-channel weight scales and zero points (quantize_static's per_channel).
    fmt = quantization.QuantFormat.QDQ if kind.startswith("qdq") else quantization.QuantFormat.QOperator
    quantization.quantize_static(float_path, path, RandomReader(shape), quant_format=fmt,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8,
                                 per_channel=kind.endswith("-pc"), reduce_range=True)


def _output_step(path):
    """The scale of the last QuantizeLinear, QLinear* or QGemm output, when the model
    has one; else None (a float output from integer products)."""
    model = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    scale = None
    for node in model.graph.node:
        if node.op_type == "QuantizeLinear" and node.input[1] in inits:
            scale = float(np.max(inits[node.input[1]]))
        elif node.op_type in ("QLinearConv", "QLinearMatMul") and node.input[6] in inits:
            scale = float(np.max(inits[node.input[6]]))
        elif node.op_type in ("QLinearAdd", "QLinearMul") and node.input[6] in inits:
            scale = float(np.max(inits[node.input[6]]))
        elif node.op_type == "QLinearSoftmax" and node.input[3] in inits:
            scale = float(np.max(inits[node.input[3]]))
        elif node.op_type == "QGemm" and len(node.input) > 7 and node.input[7] in inits:
            scale = float(np.max(inits[node.input[7]]))
    return scale


@pytest.mark.parametrize("network", ["cnn", "block", "attention"])
@pytest.mark.parametrize("kind", ["dynamic", "qdq", "qoperator", "qdq-pc", "qoperator-pc"])
def test_quantized_matches_onnxruntime(network, kind, tmp_path, run_tool):
    rng = np.random.default_rng(3)
    model = {"cnn": cnn_model, "block": mlp_model, "attention": attention_model}[network](rng)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    quantized = str(tmp_path / "quantized.onnx")
    _quantize(kind, model, quantized, tmp_path, shape)
    ops = {n.op_type for n in onnx.load(quantized).graph.node}
    assert ops & {"DynamicQuantizeLinear", "QuantizeLinear", "QLinearConv", "QLinearMatMul",
                  "MatMulInteger", "ConvInteger", "QGemm"}, ops

    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    want = ort.InferenceSession(quantized, options,
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    # onnxruntime operator by operator (graph optimisations off) as well: its fused QDQ
    # kernels round floats in another order than the operators' definitions, which moves
    # values on a step's edge by a step; that distance is the floor etrt is held to
    # against the optimised session, while the operator-by-operator one it must match.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(quantized, options,
                                 providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]

    pte = tmp_path / "quantized.pte"
    built = run_tool("build", quantized, "-o", pte, "--device", "cpu")
    if kind.startswith("qdq"):
        # Every DequantizeLinear -> Conv/MatMul/Gemm -> QuantizeLinear group with a
        # constant weight runs on the integers (attention: Q, K, V and the classifier;
        # its products of two activations stay float).
        # So does every DequantizeLinear -> Add/Mul/Softmax -> QuantizeLinear group (the
        # engine's QLinearAdd/QLinearMul/QLinearSoftmax), and every MatMul of two
        # activations between them (attention's), as onnxruntime's optimised session runs them.
        log = built.stdout + built.stderr
        products = {"cnn": 3, "block": 3, "attention": 4}[network]
        model = onnx.load(quantized)
        constants = {i.name for i in model.graph.initializer}
        readers = {}
        for node in model.graph.node:
            for name in node.input:
                readers.setdefault(name, []).append(node)
        producer = {o: n for n in model.graph.node for o in n.output}

        def dequantized(name, activation):
            p = producer.get(name)
            return (p is not None and p.op_type == "DequantizeLinear"
                    and not (activation and p.input[0] in constants))

        elementwise = sum(
            1 for n in model.graph.node if n.op_type in ("Add", "Mul", "Softmax", "MatMul")
            and all(dequantized(i, n.op_type == "MatMul") for i in n.input)
            and [r.op_type for r in readers.get(n.output[0], [])] == ["QuantizeLinear"])
        assert "%d QDQ groups made integer" % (products + elementwise) in log, log
    if kind.startswith("qoperator") and network == "attention":
        assert "QLinearSoftmax" in ops, ops
    np.save(tmp_path / "x.npy", x)
    run_tool("run", pte, "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "out")
    got = np.load(tmp_path / "out" / "output_0.npy")

    assert got.shape == want.shape
    step = _output_step(quantized)
    # Dynamic quantization's float outputs: a step of the largest output's magnitude.
    if step is None:
        step = float(np.max(np.abs(want))) / 127.0

    def top1(a, b):
        return float(np.mean(np.argmax(a, axis=1) == np.argmax(b, axis=1)))

    floor_err, floor_top1 = float(np.max(np.abs(plain - want))), top1(plain, want)
    # The QDQ groups run as onnxruntime's optimised session runs them (its QLinear*
    # kernels): that session is the reference there, the operator-by-operator one
    # (float between DequantizeLinear and QuantizeLinear) within its distance from it.
    near, far = (want, plain) if kind.startswith("qdq") else (plain, want)
    assert top1(got, near) >= 0.99, top1(got, near)
    assert float(np.max(np.abs(got - near))) <= 3 * step + 1e-6, (float(np.max(np.abs(got - near))), step)
    assert top1(got, far) >= min(0.99, floor_top1), (top1(got, far), floor_top1)
    assert float(np.max(np.abs(got - far))) <= 3 * step + floor_err + 1e-6, (
        float(np.max(np.abs(got - far))), step, floor_err)



@pytest.mark.parametrize("network", ["block", "attention"])
def test_dynamic_integer_path_is_exact(network, tmp_path, run_tool):
    """quantize_dynamic's integer path, node by node: every DynamicQuantizeLinear output
    (scale from the range widened to 0, zero point and values rounded half to even,
    saturated to uint8) and every MatMulInteger accumulator equals onnxruntime's exactly
    over several random inputs. What is left between etrt and onnxruntime is the float
    parts' last-bit rounding (LayerNormalization, Softmax, Erf), which a deep model's
    requantizations can move by a step: onnxruntime's own optimised session differs from
    its operator-by-operator one by as much."""
    rng = np.random.default_rng(3)
    model = {"block": mlp_model, "attention": attention_model}[network](rng)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    quantized = str(tmp_path / "quantized.onnx")
    _quantize("dynamic", model, quantized, tmp_path, shape)
    probe = onnx.load(quantized)
    inits = {i.name for i in probe.graph.initializer}
    integer_nodes = [n for n in probe.graph.node if n.op_type in ("DynamicQuantizeLinear", "MatMulInteger")]
    assert len(integer_nodes) >= 4, [n.op_type for n in probe.graph.node]
    exposed = []
    for n in integer_nodes:
        for name in list(n.input) + list(n.output):
            if name and name not in inits and name not in exposed and name != "x":
                exposed.append(name)
    for name in exposed:
        probe.graph.output.append(helper.make_value_info(name, onnx.TypeProto()))
    probe_path = str(tmp_path / "probe.onnx")
    onnx.save(probe, probe_path)
    pte = tmp_path / "probe.pte"
    run_tool("build", probe_path, "-o", pte, "--device", "cpu")

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(probe_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    agree = rows = checked = 0
    for seed in range(8):
        x = (np.random.default_rng(100 + seed).standard_normal(shape) * (0.5 + seed)).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        out = tmp_path / ("out%d" % seed)
        run_tool("run", pte, "--input", tmp_path / "x.npy", "--output-dir", out)
        want = dict(zip(names, session.run(None, {"x": x})))
        got = {name: np.load(out / ("output_%d.npy" % i)) for i, name in enumerate(names)}
        got["x"] = want["x"] = x
        # A node whose inputs match exactly must give exactly onnxruntime's outputs; a
        # float input may differ in its last bit (the float operators before it).
        for n in integer_nodes:
            if all(name in inits or np.array_equal(got[name], want[name]) for name in n.input if name):
                checked += 1
                for name in n.output:
                    assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name]), (
                        n.op_type, name, seed, int(np.sum(got[name] != want[name])), got[name].size)
        y = names[0]
        agree += int(np.sum(np.argmax(got[y], axis=1) == np.argmax(want[y], axis=1)))
        rows += got[y].shape[0]
    assert checked >= 4 * 8, checked
    assert agree >= 0.99 * rows, (agree, rows)

def test_contrib_operators_refused_by_name(tmp_path, run_tool):
    """A com.microsoft operator etrt does not import is named with its domain."""
    node = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 2]),
                      helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    result = run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu", check=False)
    assert result.returncode != 0
    assert "operator 'FusedMatMul' of domain 'com.microsoft' is not supported" in result.stderr


def _contrib_case(name, rng):
    """One com.microsoft node over float inputs (and int8 weights where it takes them):
    (nodes, inputs {name: array}, initializers)."""
    f = np.float32
    hidden, heads, seq = 16, 4, 6
    x = rng.standard_normal((2, seq, hidden)).astype(f)
    if name == "Gelu":
        return [helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft")], {"x": x}, []
    if name == "FastGelu":
        return ([helper.make_node("FastGelu", ["x", "bias"], ["y"], domain="com.microsoft")],
                {"x": x}, [_init(rng, "bias", (hidden,), 0.5)])
    if name == "BiasGelu":
        return ([helper.make_node("BiasGelu", ["x", "bias"], ["y"], domain="com.microsoft")],
                {"x": x}, [_init(rng, "bias", (hidden,), 0.5)])
    if name == "SkipLayerNormalization":
        node = helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                                ["y", "", "", "sum"], domain="com.microsoft", epsilon=1e-5)
        return ([node], {"x": x, "skip": rng.standard_normal(x.shape).astype(f)},
                [_init(rng, "gamma", (hidden,), 1.0), _init(rng, "beta", (hidden,), 0.2),
                 _init(rng, "bias", (hidden,), 0.2)])
    if name == "DynamicQuantizeMatMul":
        # 7-bit weights: onnxruntime's saturating kernel (see above) stays exact.
        b = rng.integers(-64, 64, (hidden, 12)).astype(np.int8)
        node = helper.make_node("DynamicQuantizeMatMul", ["x", "b", "b_scale", "b_zp", "bias"],
                                ["y"], domain="com.microsoft")
        return ([node], {"x": x},
                [numpy_helper.from_array(b, "b"),
                 numpy_helper.from_array(np.full(12, 0.01, f) * np.arange(1, 13, dtype=f), "b_scale"),
                 numpy_helper.from_array(np.zeros(12, np.int8), "b_zp"),
                 _init(rng, "bias", (12,), 0.5)])
    # Attention with a raw [batch, tokens] mask whose second row pads two tokens.
    mask = np.ones((2, seq), np.int32)
    mask[1, -2:] = 0
    node = helper.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain="com.microsoft",
                            num_heads=heads, unidirectional=1 if name == "AttentionCausal" else 0)
    return ([node], {"x": x, "mask": mask},
            [_init(rng, "w", (hidden, 3 * hidden), 0.3), _init(rng, "b", (3 * hidden,), 0.1)])


@pytest.mark.parametrize("name", ["Gelu", "FastGelu", "BiasGelu", "SkipLayerNormalization",
                                  "DynamicQuantizeMatMul", "Attention", "AttentionCausal"])
def test_contrib_operator_matches_onnxruntime(name, tmp_path, run_tool):
    rng = np.random.default_rng(5)
    nodes, feeds, inits = _contrib_case(name, rng)
    dtype = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
    inputs = [helper.make_tensor_value_info(k, dtype[v.dtype], list(v.shape))
              for k, v in feeds.items()]
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
               for o in nodes[0].output if o]
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)

    run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu")
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / (k + ".npy"), v)
        args += ["--input", tmp_path / (k + ".npy")]
    run_tool("run", tmp_path / "m.pte", *args, "--output-dir", tmp_path / "out")
    for i, w in enumerate(want):
        got = np.load(tmp_path / "out" / ("output_%d.npy" % i))
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-4)


def _qlinear_softmax_model(attrs):
    node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"],
                            domain="com.microsoft", **attrs)
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
             numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(np.array(1 / 256, np.float32), "ys"),
             numpy_helper.from_array(np.array(0, np.uint8), "yz")]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("attrs", [{"opset": 13, "axis": -1}, {"opset": 13, "axis": 1},
                                   {"opset": 11, "axis": 1}])
def test_qlinear_softmax_matches_onnxruntime(attrs, tmp_path, run_tool):
    """Before opset 13 Softmax coerced its input to 2-D at `axis`: QLinearSoftmax's `opset`
    attribute picks which one it computes."""
    path = str(tmp_path / "m.onnx")
    onnx.save(_qlinear_softmax_model(attrs), path)
    x = np.random.default_rng(2).integers(0, 256, (2, 3, 5)).astype(np.uint8)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu")
    np.save(tmp_path / "x.npy", x)
    run_tool("run", tmp_path / "m.pte", "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "out")
    got = np.load(tmp_path / "out" / "output_0.npy")
    assert got.dtype == np.uint8 and got.shape == want.shape
    # etrt computes onnxruntime's table of 256 exponentials and its floor(1 / y_scale).
    np.testing.assert_array_equal(got, want)


def test_qlinear_softmax_without_opset_refused(tmp_path, run_tool):
    path = str(tmp_path / "m.onnx")
    onnx.save(_qlinear_softmax_model({"axis": -1}), path)
    result = run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu", check=False)
    assert result.returncode != 0
    assert "QLinearSoftmax" in result.stderr
    assert "takes an int attribute 'opset' (the Softmax it computes)" in result.stderr


@pytest.mark.parametrize("trans_b,alpha", [(0, 1.0), (1, 0.5)])
def test_qgemm_runs_on_integers_like_onnxruntime(trans_b, alpha, tmp_path, run_tool):
    """A quantized QGemm becomes one integer product requantized once with alpha * a_scale *
    b_scale / y_scale, as onnxruntime computes it, not a float Gemm between dequantized
    operands (whose different rounding moves outputs on a step's edge by a step): no Gemm
    in the plan, and every output equal to onnxruntime's."""
    rng = np.random.default_rng(9)
    m, k, n = 64, 96, 48
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-64, 64, (n, k) if trans_b else (k, n)).astype(np.int8)
    inits = [numpy_helper.from_array(np.array(0.021, np.float32), "a_scale"),
             numpy_helper.from_array(np.array(131, np.uint8), "a_zp"),
             numpy_helper.from_array(b, "b"),
             numpy_helper.from_array((rng.random(n) * 0.01 + 0.001).astype(np.float32), "b_scale"),
             numpy_helper.from_array(np.zeros(n, np.int8), "b_zp"),
             numpy_helper.from_array(rng.integers(-3000, 3000, n).astype(np.int32), "bias"),
             numpy_helper.from_array(np.array(0.013, np.float32), "y_scale"),
             numpy_helper.from_array(np.array(120, np.uint8), "y_zp")]
    node = helper.make_node("QGemm", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "bias",
                                      "y_scale", "y_zp"], ["y"], domain="com.microsoft",
                            transB=trans_b, alpha=alpha)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]

    built = run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu")
    partition = [line for line in (built.stdout + built.stderr).splitlines() if "partition 0" in line]
    assert partition and "QLinearMatMul" in partition[0] and "Gemm" not in partition[0], partition
    np.save(tmp_path / "a.npy", a)
    run_tool("run", tmp_path / "m.pte", "--input", tmp_path / "a.npy", "--output-dir", tmp_path / "out")
    got = np.load(tmp_path / "out" / "output_0.npy")
    assert got.dtype == np.uint8 and np.array_equal(got, want), int(np.sum(got != want))


def _binary_model(op, a_shape, b_shape, scales, zero_points, qdq):
    """QLinearAdd / QLinearMul as the com.microsoft node, or as the QDQ group
    DequantizeLinear x2 -> Add / Mul -> QuantizeLinear that onnxruntime fuses into it."""
    names = ["sa", "sb", "sc"]
    zps = ["za", "zb", "zc"]
    inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in zip(names, scales)]
    inits += [numpy_helper.from_array(np.array(v, np.uint8), n) for n, v in zip(zps, zero_points)]
    if qdq:
        nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["fa"]),
                 helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["fb"]),
                 helper.make_node(op, ["fa", "fb"], ["f"]),
                 helper.make_node("QuantizeLinear", ["f", "sc", "zc"], ["y"])]
    else:
        nodes = [helper.make_node("QLinear" + op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"],
                                  domain="com.microsoft")]
    out = list(np.broadcast_shapes(a_shape, b_shape))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, list(a_shape)),
                     helper.make_tensor_value_info("b", TensorProto.UINT8, list(b_shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, out)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("qdq", [False, True])
@pytest.mark.parametrize("op", ["Add", "Mul"])
@pytest.mark.parametrize("a_shape,b_shape", [((3, 16, 64), (3, 16, 64)), ((3, 16, 64), (64,)),
                                             ((3, 16, 64), (1,)), ((3, 16, 1), (3, 16, 64))])
def test_qlinear_binary_bit_identical_to_onnxruntime(op, a_shape, b_shape, qdq, tmp_path, run_tool):
    """onnxruntime's kernels compute QLinearAdd as fused multiply-adds with the ratios of the
    scales, and QLinearMul as the integer product times one ratio; its optimised session
    runs the QDQ group as the same kernel. etrt computes the same bits (dequantize, add,
    quantize rounds differently: a value on a step's edge lands a step away)."""
    rng = np.random.default_rng(5)
    path = str(tmp_path / "m.onnx")
    onnx.save(_binary_model(op, a_shape, b_shape, (0.0371, 0.0213, 0.0452), (131, 77, 120), qdq), path)
    feeds = {"a": rng.integers(0, 256, a_shape).astype(np.uint8),
             "b": rng.integers(0, 256, b_shape).astype(np.uint8)}
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    want = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    run_tool("build", path, "-o", tmp_path / "m.pte", "--device", "cpu")
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / (k + ".npy"), v)
        args += ["--input", tmp_path / (k + ".npy")]
    run_tool("run", tmp_path / "m.pte", *args, "--output-dir", tmp_path / "out")
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), want)
