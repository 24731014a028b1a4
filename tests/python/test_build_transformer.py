"""`etrt build` of a transformer encoder block with a dynamic sequence length:
LayerNormalization (opset 17) or its decomposition (ReduceMean, Sub, Pow, Sqrt, Div;
opset 13), two-head self-attention (MatMul, Add, Reshape, Transpose, Mul, Softmax),
a feed-forward layer with Gelu written with Erf, residual Adds. CPU and simulated-GPU
builds match NumPy at two sequence lengths within the bounds."""
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(3)
D, H, F = 16, 2, 32
HD = D // H


def param(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


P = {
    "g1": (1 + param(D, scale=0.1)), "b1": param(D, scale=0.1),
    "Wq": param(D, D), "bq": param(D), "Wk": param(D, D), "bk": param(D),
    "Wv": param(D, D), "bv": param(D), "Wo": param(D, D), "bo": param(D),
    "g2": (1 + param(D, scale=0.1)), "b2": param(D, scale=0.1),
    "W1": param(D, F), "c1": param(F), "W2": param(F, D), "c2": param(D),
}
CONSTANTS = {
    "heads_shape": np.array([0, 0, H, HD], dtype=np.int64),
    "merge_shape": np.array([0, 0, D], dtype=np.int64),
    "scale": np.array(1.0 / math.sqrt(HD), dtype=np.float32),
    "half": np.array(0.5, dtype=np.float32), "one": np.array(1.0, dtype=np.float32),
    "inv_sqrt2": np.array(1.0 / math.sqrt(2.0), dtype=np.float32),
    "two": np.array(2.0, dtype=np.float32), "eps": np.array(1e-5, dtype=np.float32),
}


def layer_norm_nodes(x, g, b, out, decomposed):
    if not decomposed:
        return [helper.make_node("LayerNormalization", [x, g, b], [out], name=out, axis=-1, epsilon=1e-5)]
    p = out + "_"
    return [
        helper.make_node("ReduceMean", [x], [p + "mean"], name=p + "mean", axes=[-1], keepdims=1),
        helper.make_node("Sub", [x, p + "mean"], [p + "centered"], name=p + "sub"),
        helper.make_node("Pow", [p + "centered", "two"], [p + "sq"], name=p + "pow"),
        helper.make_node("ReduceMean", [p + "sq"], [p + "var"], name=p + "var", axes=[-1], keepdims=1),
        helper.make_node("Add", [p + "var", "eps"], [p + "var_eps"], name=p + "add_eps"),
        helper.make_node("Sqrt", [p + "var_eps"], [p + "std"], name=p + "sqrt"),
        helper.make_node("Div", [p + "centered", p + "std"], [p + "normed"], name=p + "div"),
        helper.make_node("Mul", [p + "normed", g], [p + "scaled"], name=p + "mul"),
        helper.make_node("Add", [p + "scaled", b], [out], name=p + "shift"),
    ]


def linear(x, w, b, out):
    return [helper.make_node("MatMul", [x, w], [out + "_mm"], name=out + "_mm"),
            helper.make_node("Add", [out + "_mm", b], [out], name=out + "_bias")]


def encoder_model(decomposed):
    n = []
    n += layer_norm_nodes("x", "g1", "b1", "ln1", decomposed)
    for name in ("q", "k", "v"):
        n += linear("ln1", "W" + name, "b" + name, name)
        n.append(helper.make_node("Reshape", [name, "heads_shape"], [name + "_heads"], name=name + "_split"))
    n.append(helper.make_node("Transpose", ["q_heads"], ["qt"], name="q_t", perm=[0, 2, 1, 3]))
    n.append(helper.make_node("Transpose", ["k_heads"], ["kt"], name="k_t", perm=[0, 2, 3, 1]))
    n.append(helper.make_node("Transpose", ["v_heads"], ["vt"], name="v_t", perm=[0, 2, 1, 3]))
    n.append(helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="scores"))
    n.append(helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale_scores"))
    n.append(helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1))
    n.append(helper.make_node("MatMul", ["probs", "vt"], ["ctx"], name="context"))
    n.append(helper.make_node("Transpose", ["ctx"], ["ctx_t"], name="ctx_t", perm=[0, 2, 1, 3]))
    n.append(helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["merged"], name="merge"))
    n += linear("merged", "Wo", "bo", "attn")
    n.append(helper.make_node("Add", ["x", "attn"], ["x1"], name="residual1"))
    n += layer_norm_nodes("x1", "g2", "b2", "ln2", decomposed)
    n += linear("ln2", "W1", "c1", "h")
    n += [helper.make_node("Mul", ["h", "inv_sqrt2"], ["h_s"], name="gelu_scale"),
          helper.make_node("Erf", ["h_s"], ["h_erf"], name="gelu_erf"),
          helper.make_node("Add", ["h_erf", "one"], ["h_1"], name="gelu_add"),
          helper.make_node("Mul", ["h", "h_1"], ["h_m"], name="gelu_mul"),
          helper.make_node("Mul", ["h_m", "half"], ["gelu"], name="gelu_half")]
    n += linear("gelu", "W2", "c2", "ffn")
    n.append(helper.make_node("Add", ["x1", "ffn"], ["y"], name="residual2"))
    inits = [numpy_helper.from_array(v, k) for k, v in list(P.items()) + list(CONSTANTS.items())]
    graph = helper.make_graph(n, "encoder",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", D])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", D])], inits)
    opset = 13 if decomposed else 17
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def reference(x):
    x = x.astype(np.float64)
    p = {k: v.astype(np.float64) for k, v in P.items()}
    s = x.shape[1]
    ln1 = layer_norm(x, p["g1"], p["b1"])
    q, k, v = (ln1 @ p["W" + n] + p["b" + n] for n in "qkv")
    heads = lambda t: t.reshape(1, s, H, HD).transpose(0, 2, 1, 3)  # noqa: E731
    scores = heads(q) @ heads(k).transpose(0, 1, 3, 2) / math.sqrt(HD)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probs = scores / scores.sum(-1, keepdims=True)
    ctx = (probs @ heads(v)).transpose(0, 2, 1, 3).reshape(1, s, D)
    x1 = x + ctx @ p["Wo"] + p["bo"]
    h = layer_norm(x1, p["g2"], p["b2"]) @ p["W1"] + p["c1"]
    gelu = 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    return (x1 + gelu @ p["W2"] + p["c2"]).astype(np.float32)


def main():
    for decomposed in (False, True):
        kind = "decomposed" if decomposed else "layernorm"
        model = bt.save_model(encoder_model(decomposed), "encoder_%s.onnx" % kind)
        for device, env in (("cpu", bt.cpu_env()), ("cuda:0", bt.gpu_env())):
            pte, err = bt.build(model, "encoder_%s_%s.pte" % (kind, device.replace(":", "")), "--device", device,
                                "--shape", "seq:1:32", env=env)
            # A float32 plan keeps the attention's products (EtrtAttention is for half
            # precision GPU plans: test_build_attention.py).
            bt.check("0 attentions fused" in err, "%s build, %s: %s" % (kind, device, err[-600:]))
            m = bt.method(pte)
            if m:
                bt.check(m["input_tensors"][0]["sizes"] == [1, 32, D], "bounds recorded: %s" % m["input_tensors"])
            for seq in (7, 32):
                x = rng.standard_normal((1, seq, D)).astype(np.float32)
                outs = bt.run(pte, [x], env=env, tag="%s_%s_%d" % (kind, device.replace(":", ""), seq))
                if outs:
                    bt.compare(outs[0], reference(x), "fp32", "encoder (%s) on %s, seq %d" % (kind, device, seq))
    bt.finish("test_build_transformer")


if __name__ == "__main__":
    main()
