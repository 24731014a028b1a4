"""`etrt build` of a small convolutional network: Conv + BatchNormalization + Relu, a
residual Add, GlobalAveragePool, Flatten and Gemm, with a dynamic batch. The batch
norms fold into the convolutions; CPU and simulated-GPU builds match NumPy."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(2)
C = 8


def param(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


P = {
    "W1": param(C, 3, 3, 3), "B1": param(C),
    "s1": (1 + param(C)).astype(np.float32), "t1": param(C), "m1": param(C), "v1": (0.5 + np.abs(param(C))).astype(np.float32),
    "W2": param(C, C, 3, 3), "B2": param(C),
    "s2": (1 + param(C)).astype(np.float32), "t2": param(C), "m2": param(C), "v2": (0.5 + np.abs(param(C))).astype(np.float32),
    "Wf": param(10, C), "Bf": param(10),
}


def cnn_model():
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s1", "t1", "m1", "v1"], ["n1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "s2", "t2", "m2", "v2"], ["n2"], name="bn2", epsilon=1e-5),
        helper.make_node("Add", ["n2", "r1"], ["sum"], name="residual"),
        helper.make_node("Relu", ["sum"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "Wf", "Bf"], ["y"], name="classifier", transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                              [numpy_helper.from_array(v, k) for k, v in P.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def conv2d(x, w, b):
    """3x3, stride 1, pad 1."""
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            patch = xp[:, :, i:i + h, j:j + wd]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out + b[None, :, None, None]


def bn(x, s, t, m, v):
    shape = (1, -1, 1, 1)
    return (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-5) * s.reshape(shape) + t.reshape(shape)


def reference(x):
    r1 = np.maximum(bn(conv2d(x, P["W1"], P["B1"]), P["s1"], P["t1"], P["m1"], P["v1"]), 0)
    n2 = bn(conv2d(r1, P["W2"], P["B2"]), P["s2"], P["t2"], P["m2"], P["v2"])
    r2 = np.maximum(n2 + r1, 0)
    pooled = r2.mean(axis=(2, 3))
    return (pooled @ P["Wf"].T.astype(np.float64) + P["Bf"]).astype(np.float32)


def main():
    model = bt.save_model(cnn_model(), "cnn.onnx")
    x = rng.standard_normal((3, 3, 12, 12)).astype(np.float32)
    want = reference(x)

    pte, err = bt.build(model, "cnn_cpu.pte", "--device", "cpu", "--shape", "N:1:4")
    bt.check("2 batch norms folded" in err, "both batch norms fold into their convolutions: %s" % err)
    bt.check("BatchNormalization" not in err.split("partition 0", 1)[-1], "no BatchNormalization left: %s" % err)
    m = bt.method(pte)
    if m:
        bt.check(m["input_tensors"][0]["sizes"] == [4, 3, 12, 12], "largest input shape: %s" % m["input_tensors"])
    outs = bt.run(pte, [x], env=bt.cpu_env(), tag="cpu")
    if outs:
        bt.compare(outs[0], want, "fp32", "CNN on the CPU")

    pte, err = bt.build(model, "cnn_gpu.pte", "--device", "cuda:0", "--shape", "x:1x3x12x12:4x3x12x12",
                        env=bt.gpu_env())
    m = bt.method(pte)
    if m:
        bt.check(bt.labels(m) == ["cuda:0"], "built for cuda:0: %s" % bt.labels(m))
    outs = bt.run(pte, [x], env=bt.gpu_env(), tag="sim")
    if outs:
        bt.compare(outs[0], want, "fp32", "CNN on sim cuda:0")

    # A batch outside the bounds is the runtime's to refuse; one inside runs.
    x1 = x[:1].copy()
    outs = bt.run(pte, [x1], env=bt.gpu_env(), tag="sim_batch1")
    if outs:
        bt.compare(outs[0], want[:1], "fp32", "CNN batch 1 on sim cuda:0")
    bt.finish("test_build_cnn")


if __name__ == "__main__":
    main()
