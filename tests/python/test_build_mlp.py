"""`etrt build` of an MLP (MatMul + Add + Relu, dynamic batch): built for the CPU and
for simulated GPUs, run, and compared with NumPy; the command line's refusals."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(1)
W1 = rng.standard_normal((16, 32)).astype(np.float32) * 0.3
B1 = rng.standard_normal(32).astype(np.float32) * 0.1
W2 = rng.standard_normal((32, 32)).astype(np.float32) * 0.3
B2 = rng.standard_normal(32).astype(np.float32) * 0.1
W3 = rng.standard_normal((32, 10)).astype(np.float32) * 0.3
B3 = rng.standard_normal(10).astype(np.float32) * 0.1


def mlp_model():
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h1"], name="fc1"),
        helper.make_node("Add", ["h1", "B1"], ["h1b"], name="fc1_bias"),
        helper.make_node("Relu", ["h1b"], ["a1"], name="relu1"),
        helper.make_node("MatMul", ["a1", "W2"], ["h2"], name="fc2"),
        helper.make_node("Add", ["h2", "B2"], ["h2b"], name="fc2_bias"),
        helper.make_node("Relu", ["h2b"], ["a2"], name="relu2"),
        helper.make_node("MatMul", ["a2", "W3"], ["h3"], name="fc3"),
        helper.make_node("Add", ["h3", "B3"], ["y"], name="fc3_bias"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(W1, "W1"), (B1, "B1"), (W2, "W2"), (B2, "B2"), (W3, "W3"), (B3, "B3")]]
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def reference(x):
    a1 = np.maximum(x @ W1 + B1, 0)
    a2 = np.maximum(a1 @ W2 + B2, 0)
    return a2 @ W3 + B3


def main():
    model = bt.save_model(mlp_model(), "mlp.onnx")
    x = rng.standard_normal((5, 16)).astype(np.float32)
    want = reference(x)

    # CPU.
    pte, err = bt.build(model, "mlp_cpu.pte", "--device", "cpu", "--shape", "batch:1:8")
    bt.check("3 GEMMs fused" in err, "the MatMul + Add pairs become Gemm: %s" % err)
    bt.check("partition 0 cpu: 5 ops (Gemm x3, Relu x2)" in err, "progress names the partition: %s" % err)
    m = bt.method(pte)
    if m:
        bt.check(m["input_tensors"][0]["sizes"] == [8, 16], "input recorded at its largest: %s" % m["input_tensors"])
        bt.check(bt.labels(m) == ["cpu"], "one CPU delegate: %s" % bt.labels(m))
    outs = bt.run(pte, [x], env=bt.cpu_env(), tag="cpu")
    if outs:
        bt.compare(outs[0], want, "fp32", "MLP on the CPU")

    # Simulated GPU (the CUDA plan's operations run with the CPU kernels on sim).
    pte, err = bt.build(model, "mlp_gpu.pte", "--shape", "batch:1:8", env=bt.gpu_env())
    m = bt.method(pte)
    if m:
        bt.check(bt.labels(m) == ["cuda:0"], "default device with a GPU present is cuda:0: %s" % bt.labels(m))
        bt.check(bt.instruction_summary(m) == ["h2d", "delegate 0", "d2h"],
                 "copies around the GPU partition: %s" % bt.instruction_summary(m))
    outs = bt.run(pte, [x], env=bt.gpu_env(), tag="sim")
    if outs:
        bt.compare(outs[0], want, "fp32", "MLP on sim cuda:0")

    # Every precision builds; on the CPU executor results stay within its tolerance.
    for precision in ("tf32", "fp16", "bf16"):
        pte, _ = bt.build(model, "mlp_%s.pte" % precision, "--device", "cpu", "--shape", "batch:5",
                          "--precision", precision, "--quiet")
        outs = bt.run(pte, [x], env=bt.cpu_env(), tag=precision)
        if outs:
            bt.compare(outs[0], want, precision, "MLP --precision %s" % precision)

    # Refusals: exit 2 and a message that says what to do; nothing written.
    pte, err = bt.build(model, "refused.pte", "--device", "cpu", expect=2)
    bt.check("symbolic size 'batch'" in err and "--shape batch:MIN:MAX" in err, "unbounded symbol: %s" % err)
    bt.check(not os.path.exists(pte), "a refused build writes nothing")
    _, err = bt.build(model, "refused.pte", "--device", "tpu", expect=2)
    bt.check("device 'tpu'" in err, "bad device: %s" % err)
    _, err = bt.build(model, "refused.pte", "--precision", "fp8", expect=2)
    bt.check("--precision 'fp8'" in err, "bad precision: %s" % err)
    _, err = bt.build(model, "refused.pte", "--shape", "batch", expect=2)
    bt.check("--shape 'batch'" in err, "bad shape: %s" % err)
    _, err = bt.build(model, "refused.pte", "--shape", "height:3", "--device", "cpu", expect=2)
    bt.check("no input or dimension symbol named 'height'" in err, "unknown symbol: %s" % err)
    _, err = bt.build(model, "refused.pte", "--frobnicate", expect=2)
    bt.check("unknown option" in err, "unknown flag: %s" % err)
    _, err = bt.build(bt.path("missing.onnx"), "refused.pte", expect=2)
    bt.check("no such file" in err, "missing model: %s" % err)
    with open(bt.path("junk.onnx"), "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f\x01not a model")
    _, err = bt.build(bt.path("junk.onnx"), "refused.pte", expect=2)
    result = bt.etrt(["build"])
    bt.check(result.returncode == 2 and "no model given" in result.stderr, "no arguments: %s" % result.stderr)
    result = bt.etrt(["build", "--help"])
    bt.check(result.returncode == 0 and "--target-device" in result.stdout, "--help")

    unknown = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"], name="r"),
         helper.make_node("StringNormalizer", ["t"], ["y"], name="norm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3])]),
        opset_imports=[helper.make_opsetid("", 13)])
    _, err = bt.build(bt.save_model(unknown, "unknown.onnx"), "refused.pte", expect=2)
    bt.check("the engine has no operator StringNormalizer (node 'norm')" in err, "unknown operator: %s" % err)
    bt.finish("test_build_mlp")


if __name__ == "__main__":
    main()
