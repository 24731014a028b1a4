"""`etrt build --precision fp16|bf16` for a GPU (a simulated one here): the plan stores its
weights in the half type (the plan's weights halve), activations flow in it, and float
casts stand only at the plan's edges (none where the model's own I/O is half). Checked on a
small CNN (Conv + BatchNormalization + Relu, MaxPool, residual Add, GlobalAveragePool,
Gemm) and a transformer block (MatMul + bias, LayerNormalization or its decomposition,
softmax attention, Gelu written with Erf), against float64 NumPy references within the half
type's tolerance relative to the largest output. A CPU plan keeps float32."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402
import test_build_cnn as cnn  # noqa: E402
import test_build_transformer as transformer  # noqa: E402

rng = np.random.default_rng(11)
C = 32
# Largest output error allowed, relative to the largest output (a float16 mantissa has 11
# bits, bfloat16's 8).
RELATIVE = {"fp16": 5e-3, "bf16": 2e-2}


def param(*shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


P = {
    "W1": param(C, 3, 3, 3), "B1": param(C),
    "s1": 1 + param(C), "t1": param(C), "m1": param(C), "v1": 0.5 + np.abs(param(C)),
    "W2": param(C, C, 3, 3, scale=0.05), "B2": param(C),
    "s2": 1 + param(C), "t2": param(C), "m2": param(C), "v2": 0.5 + np.abs(param(C)),
    "Wf": param(10, C), "Bf": param(10),
}


def cnn_model():
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s1", "t1", "m1", "v1"], ["n1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "W2", "B2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "s2", "t2", "m2", "v2"], ["n2"], name="bn2", epsilon=1e-5),
        helper.make_node("Add", ["n2", "p1"], ["sum"], name="residual"),
        helper.make_node("Relu", ["sum"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "Wf", "Bf"], ["y"], name="classifier", transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in P.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def cnn_reference(x):
    r1 = np.maximum(cnn.bn(cnn.conv2d(x, P["W1"], P["B1"]), P["s1"], P["t1"], P["m1"], P["v1"]), 0)
    n, c, h, w = r1.shape
    p1 = r1.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    n2 = cnn.bn(cnn.conv2d(p1, P["W2"], P["B2"]), P["s2"], P["t2"], P["m2"], P["v2"])
    pooled = np.maximum(n2 + p1, 0).mean(axis=(2, 3))
    return pooled @ P["Wf"].T.astype(np.float64) + P["Bf"]


def half_io_model():
    """float16 in and out, float32 inside (Cast, MatMul, Add, Relu, Cast)."""
    w = param(8, 4)
    nodes = [
        helper.make_node("Cast", ["x"], ["xf"], name="to_float", to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["xf", "w"], ["mm"], name="mm"),
        helper.make_node("Relu", ["mm"], ["r"], name="relu"),
        helper.make_node("Cast", ["r"], ["y"], name="to_half", to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(nodes, "half_io",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 4])],
                              [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), w


def types_of(pte):
    m = bt.method(pte)
    return None if m is None else m["delegates"][0].get("types")


def check_half_plan(pte, fp32_pte, precision, what):
    """Weights all in the half type, half the float32 plan's bytes; casts only at the edges."""
    half = "float16" if precision == "fp16" else "bfloat16"
    t, t32 = types_of(pte), types_of(fp32_pte)
    if not bt.check(t is not None and t32 is not None, "%s: inspect reports the plan's types" % what):
        return
    bt.check(t["precision"] == precision, "%s: precision %s" % (what, t["precision"]))
    bt.check(t["weight_bytes"]["float32"] == 0, "%s: float32 weights left: %s" % (what, t))
    bt.check(2 * t["weight_bytes"][half] == t32["weight_bytes"]["float32"],
             "%s: %s weights are half the float32 plan's: %s vs %s" % (what, half, t, t32))
    bt.check(t["values"][half] > 0 and t["values"]["float32"] == 2,
             "%s: activations in %s, float32 only at the plan's input and output: %s" % (what, half, t))
    bt.check(t["float_casts"] == 2 and t["edge_casts"] == 2, "%s: two casts, at the edges: %s" % (what, t))


def check_outputs(got, want, precision, what):
    if got is None:
        return
    if not bt.check(got.shape == want.shape and got.dtype == np.float32,
                    "%s: output %s %s, expected %s float32" % (what, got.shape, got.dtype, want.shape)):
        return
    err = float(np.max(np.abs(got.astype(np.float64) - want))) / float(np.max(np.abs(want)))
    print("  %s: largest error %.2e of the largest output" % (what, err))
    bt.check(err <= RELATIVE[precision], "%s: error %.3g over %g" % (what, err, RELATIVE[precision]))


def test_model(name, model, shape_flag, inputs, want):
    env = bt.gpu_env()
    path = bt.save_model(model, "%s.onnx" % name)
    fp32, _ = bt.build(path, "%s_fp32.pte" % name, "--device", "cuda:0", "--shape", shape_flag, env=env)
    for precision in ("fp16", "bf16"):
        what = "%s --precision %s" % (name, precision)
        pte, err = bt.build(path, "%s_%s.pte" % (name, precision), "--device", "cuda:0", "--shape", shape_flag,
                            "--precision", precision, env=env)
        bt.check("0 kept float32" in err, "%s: every node in the half type: %s" % (what, err))
        check_half_plan(pte, fp32, precision, what)
        if os.path.exists(pte) and os.path.exists(fp32):
            ratio = os.path.getsize(pte) / os.path.getsize(fp32)
            print("  %s: program %.2f of the float32 one" % (what, ratio))
            if name == "cnn":  # weights dominate its program
                bt.check(ratio < 0.6, "%s: program is %.2f of the float32 one" % (what, ratio))
        outs = bt.run(pte, inputs, env=env, tag="%s_%s" % (name, precision))
        if outs:
            check_outputs(outs[0], want, precision, what)


def main():
    x = rng.standard_normal((3, 3, 12, 12)).astype(np.float32)
    test_model("cnn", cnn_model(), "N:1:4", [x], cnn_reference(x))
    for decomposed in (False, True):
        x = rng.standard_normal((1, 9, transformer.D)).astype(np.float32)
        test_model("encoder_%s" % ("decomposed" if decomposed else "layernorm"),
                   transformer.encoder_model(decomposed), "seq:1:16", [x],
                   transformer.reference(x).astype(np.float64))

    # GPU, CPU, GPU (Flatten placed on the CPU): each GPU plan casts at its own edges, the
    # CPU plan keeps float32, and the values between the plans are float32.
    path = bt.save_model(cnn_model(), "cnn_split.onnx")
    pte, _ = bt.build(path, "cnn_split.pte", "--device", "cuda:0", "--shape", "N:1:4", "--precision", "fp16",
                      "--place", "flatten=cpu", env=bt.gpu_env())
    m = bt.method(pte)
    if m:
        kinds = [(d["compile_specs"].get("target_device"), d.get("types", {})) for d in m["delegates"]]
        bt.check([k for k, _ in kinds] == ["cuda:0", "cpu", "cuda:0"], "three plans: %s" % kinds)
        for k, t in kinds:
            half = t.get("values", {}).get("float16", 0)
            bt.check((half > 0) == (k != "cpu") and t.get("float_casts") == t.get("edge_casts"),
                     "%s plan: %s" % (k, t))
    x = rng.standard_normal((2, 3, 12, 12)).astype(np.float32)
    outs = bt.run(pte, [x], env=bt.gpu_env(), tag="cnn_split")
    if outs:
        check_outputs(outs[0], cnn_reference(x), "fp16", "cnn split over GPU, CPU, GPU")

    # The model's own I/O is float16: no float cast at all.
    model, w = half_io_model()
    path = bt.save_model(model, "half_io.onnx")
    pte, _ = bt.build(path, "half_io.pte", "--device", "cuda:0", "--precision", "fp16", env=bt.gpu_env())
    t = types_of(pte)
    if bt.check(t is not None, "half I/O: types reported"):
        bt.check(t["float_casts"] == 0 and t["values"]["float32"] == 0 and t["weight_bytes"]["float32"] == 0,
                 "half I/O: nothing in float32, no casts: %s" % t)
    x = rng.standard_normal((2, 8)).astype(np.float16)
    outs = bt.run(pte, [x], env=bt.gpu_env(), tag="half_io")
    if outs:
        bt.check(outs[0].dtype == np.float16, "half I/O: output %s" % outs[0].dtype)
        want = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
        check_outputs(outs[0].astype(np.float32), want, "fp16", "half I/O")

    # Precision applies to GPU plans: a CPU plan keeps float32.
    path = bt.save_model(cnn_model(), "cnn_cpu.onnx")
    pte, err = bt.build(path, "cnn_cpu_fp16.pte", "--device", "cpu", "--shape", "N:1:4", "--precision", "fp16")
    t = types_of(pte)
    if bt.check(t is not None, "CPU plan: types reported"):
        bt.check(t["weight_bytes"]["float16"] == 0 and t["values"]["float16"] == 0 and t["float_casts"] == 0,
                 "CPU plan keeps float32: %s" % t)
    bt.finish("test_build_half")


if __name__ == "__main__":
    main()
