"""`etrt build` fuses a convolution's epilogue for CPU plans only: a small residual block
(Conv + Relu, Conv + Add of the input + Relu) becomes two EtrtFusedConv nodes for
--device cpu, whose run matches NumPy with the CPU's default kernels and with
ETRT_CPU_KERNELS=etrt, and stays Conv + Add + Relu for a GPU plan (no CUDA kernel)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(3)
W1 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2
B1 = rng.standard_normal(8).astype(np.float32) * 0.1
W2 = rng.standard_normal((8, 8, 1, 1)).astype(np.float32) * 0.3


def block_model():
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "x"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["y"], name="relu2"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in [(W1, "W1"), (B1, "B1"), (W2, "W2")]]
    graph = helper.make_graph(nodes, "block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 6, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def reference(x):
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    c1 = np.zeros((n, 8, h, w), np.float64)
    for kh in range(3):
        for kw in range(3):
            c1 += np.einsum("nchw,mc->nmhw", padded[:, :, kh:kh + h, kw:kw + w], W1[:, :, kh, kw])
    r1 = np.maximum(c1 + B1[None, :, None, None], 0)
    c2 = np.einsum("nchw,mc->nmhw", r1, W2[:, :, 0, 0])
    return np.maximum(c2 + x, 0)


def main():
    model = bt.save_model(block_model(), "block.onnx")
    x = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
    want = reference(x)
    pte, err = bt.build(model, "block_cpu.pte", "--device", "cpu")
    bt.check("2 convolutions fused" in err, "CPU plan: two fusions: %s" % err)
    bt.check("partition 0 cpu: 2 ops (EtrtFusedConv x2)" in err, "CPU plan: two EtrtFusedConv nodes: %s" % err)
    for kernels in (None, "etrt"):
        env = bt.cpu_env()
        env.pop("ETRT_CPU_KERNELS", None)
        if kernels:
            env["ETRT_CPU_KERNELS"] = kernels
        outs = bt.run(pte, [x], env=env, tag="block_%s" % (kernels or "default"))
        if outs:
            bt.compare(outs[0], want, "fp32", "fused block, %s kernels" % (kernels or "default"))
    _, err = bt.build(model, "block_gpu.pte", "--device", "cuda:0")
    # Relu is an activation the GPU's fused convolution applies too.
    bt.check("2 convolutions fused" in err, "GPU plan: two fusions: %s" % err)


if __name__ == "__main__":
    main()
    bt.finish("test_build_conv_fusion")
