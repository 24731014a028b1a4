"""Control flow as exported voice-activity models have it: an If on a shape-derived
condition wrapping the network (folded at build time: the branch taken is inlined), an
If on a graph input (`sr == 16000`, run as a sub-network unless --shape-values gives the
value), and a Loop computing a running value whose body reads outer-scope values,
built with `etrt build`, run with `etrt run` and compared with NumPy."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.standard_normal((1, 16)).astype(np.float32)
W16 = (RNG.standard_normal((16, 4)) * 0.5).astype(np.float32)
W8 = (RNG.standard_normal((8, 4)) * 0.5).astype(np.float32)
U = (RNG.standard_normal((4, 4)) * 0.5).astype(np.float32)
TRIPS = 5


def const(name, value):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value), name))


def vad_model():
    # then: the 16 kHz network; else: the 8 kHz one on every other sample.
    then_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w16"], ["t_mm"], name="t_mm"),
         helper.make_node("Relu", ["t_mm"], ["t_out"], name="t_relu")],
        "then_16k", [], [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph(
        [const("e_starts", [0]), const("e_ends", [16]), const("e_axes", [1]), const("e_steps", [2]),
         helper.make_node("Slice", ["x", "e_starts", "e_ends", "e_axes", "e_steps"], ["e_x"],
                          name="e_slice"),
         helper.make_node("MatMul", ["e_x", "w8"], ["e_mm"], name="e_mm"),
         helper.make_node("Sigmoid", ["e_mm"], ["e_out"], name="e_sigmoid")],
        "else_8k", [], [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    # A shape-derived condition: x has 16 samples, known when the plan is built.
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="x_shape"),
        const("one", np.int64(1)),
        helper.make_node("Gather", ["x_shape", "one"], ["samples"], name="samples"),
        const("sixteen", np.int64(16)),
        helper.make_node("Equal", ["samples", "sixteen"], ["is_16"], name="is_16"),
        helper.make_node("If", ["is_16"], ["shape_net"], name="shape_if",
                         then_branch=then_branch, else_branch=else_branch),
        const("sr_16k", np.int64(16000)),
        helper.make_node("Equal", ["sr", "sr_16k"], ["sr_is_16k"], name="sr_is_16k"),
        helper.make_node("If", ["sr_is_16k"], ["rate_net"], name="rate_if",
                         then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Add", ["shape_net", "rate_net"], ["y"], name="y"),
    ]
    graph = helper.make_graph(
        nodes, "vad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(W16, "w16"), numpy_helper.from_array(W8, "w8")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def loop_model():
    # h = tanh(h @ u + i) for i in 0..TRIPS-1, every h kept; u is read from outside.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond"),
         helper.make_node("Cast", ["i"], ["i_f"], name="i_f", to=TensorProto.FLOAT),
         helper.make_node("MatMul", ["h_in", "u"], ["hu"], name="hu"),
         helper.make_node("Add", ["hu", "i_f"], ["pre"], name="pre"),
         helper.make_node("Tanh", ["pre"], ["h_out"], name="tanh"),
         helper.make_node("Identity", ["h_out"], ["h_scan"], name="scan")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("h_scan", TensorProto.FLOAT, [1, 4])])
    nodes = [
        helper.make_node("MatMul", ["x", "w16"], ["h0"], name="h0"),
        helper.make_node("Loop", ["trips", "", "h0"], ["h", "hs"], name="loop", body=body),
    ]
    graph = helper.make_graph(
        nodes, "running",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16]),
         helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("hs", TensorProto.FLOAT, [None, 1, 4])],
        [numpy_helper.from_array(W16, "w16"), numpy_helper.from_array(U, "u")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def scan_model():
    # A running sum over axis 1 of x, read backwards, each step's 2 * sum stacked on
    # axis 1 of the output; the body also reads the outer `bias`.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "col"], ["s_out"], name="acc"),
         helper.make_node("Mul", ["s_out", "two"], ["twice"], name="twice"),
         helper.make_node("Add", ["twice", "bias"], ["step"], name="step")],
        "scan_body",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("col", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("step", TensorProto.FLOAT, [3])])
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Relu", ["b"], ["bias"], name="bias"),
        helper.make_node("Scan", ["s0", "x"], ["s", "steps"], name="scan", body=body,
                         num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                         scan_output_axes=[1]),
    ]
    graph = helper.make_graph(
        nodes, "scan",
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("steps", TensorProto.FLOAT, [3, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def main():
    model = bt.save_model(vad_model(), "vad.onnx")
    net16 = np.maximum(X @ W16, 0)
    net8 = sigmoid(X[:, ::2] @ W8)

    # The shape If folds; the one on `sr` runs as a sub-network and takes either branch.
    pte, err = bt.build(model, "vad.pte", "--device", "cpu")
    bt.check("1 Ifs folded" in err, "the shape-derived If was not folded: %s" % err)
    for sr, rate_net in ((16000, net16), (8000, net8)):
        out = bt.run(pte, [X, np.array(sr, dtype=np.int64)], env=bt.cpu_env(), tag="sr%d" % sr)
        if out is not None:
            bt.compare(out[0], net16 + rate_net, "fp32", "vad y at sr %d" % sr)

    # With the rate given at build time both fold: no control flow is left.
    pte, err = bt.build(model, "vad_16k.pte", "--device", "cpu", "--shape-values", "sr:16000")
    bt.check("2 Ifs folded" in err, "the sr If was not folded with --shape-values: %s" % err)
    out = bt.run(pte, [X, np.array(16000, dtype=np.int64)], env=bt.cpu_env(), tag="16k")
    if out is not None:
        bt.compare(out[0], 2 * net16, "fp32", "vad y folded")

    # A GPU target: the run-time If stays on the CPU, the rest may go to the GPU.
    pte, err = bt.build(model, "vad_gpu.pte", "--device", "cuda:0", env=bt.gpu_env())
    out = bt.run(pte, [X, np.array(8000, dtype=np.int64)], env=bt.gpu_env(), tag="gpu")
    if out is not None:
        bt.compare(out[0], net16 + net8, "fp32", "vad y on the gpu target")

    model = bt.save_model(loop_model(), "loop.onnx")
    h = X @ W16
    hs = []
    for i in range(TRIPS):
        h = np.tanh(h @ U + np.float32(i))
        hs.append(h)
    pte, _ = bt.build(model, "loop.pte", "--device", "cpu")
    out = bt.run(pte, [X, np.array(TRIPS, dtype=np.int64)], env=bt.cpu_env(), tag="loop")
    if out is not None:
        bt.compare(out[0], h, "fp32", "loop h")
        bt.check(out[1].shape == (TRIPS, 1, 4), "loop hs shape %s" % (out[1].shape,))
        if out[1].shape == (TRIPS, 1, 4):
            bt.compare(out[1], np.stack(hs), "fp32", "loop hs")
    # Zero trips: the initial value comes back, the scan output is empty.
    out = bt.run(pte, [X, np.array(0, dtype=np.int64)], env=bt.cpu_env(), tag="loop0")
    if out is not None:
        bt.compare(out[0], X @ W16, "fp32", "loop h after no trips")
        bt.check(out[1].shape == (0, 1, 4), "empty loop hs shape %s" % (out[1].shape,))
    model = bt.save_model(scan_model(), "scan.onnx")
    s0 = RNG.standard_normal(3).astype(np.float32)
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    b = RNG.standard_normal(3).astype(np.float32)
    state, steps = s0.copy(), []
    for t in reversed(range(5)):
        state = state + x[:, t]
        steps.append(2 * state + np.maximum(b, 0))
    pte, _ = bt.build(model, "scan.pte", "--device", "cpu")
    out = bt.run(pte, [s0, x, b], env=bt.cpu_env(), tag="scan")
    if out is not None:
        bt.compare(out[0], state, "fp32", "scan state")
        bt.compare(out[1], np.stack(steps, axis=1), "fp32", "scan steps")
    bt.finish("test_build_control")


main()
