"""`etrt build` of self-attention as exporters write it, for a GPU target: a packed
Q/K/V projection Split in three, K transposed by two Transposes, the scores divided by
sqrt(d) and an additive mask from a graph input. The builder replaces the chain with
one EtrtAttention reading the packed projection (no Split, Reshape or Transpose left) in
float16 and bfloat16 plans, and the results match NumPy; a float32 plan keeps the chain. Where the scores have another
reader the chain stays as it is. Where Q, K and V come from three separate projections
of the input (MatMul with or without an Add of a bias), the build packs them into one
product the attention reads at three offsets (two nodes left instead of four, the same
results; ETRT_PACK_QKV=0 keeps them apart); where K's projection has a second reader,
nothing is packed. ETRT_TEST_REAL_GPU=1 runs the plans on the real GPU (the float16 one
on the tensor-core kernel)."""
import math
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(11)
B, S, H, HD = 2, 70, 4, 16
D = H * HD
W = (rng.standard_normal((D, 3 * D)) * 0.2).astype(np.float32)
BIAS = (rng.standard_normal(3 * D) * 0.1).astype(np.float32)


def attention_tail():
    """Softmax of the masked scores, its product with V's heads, and the heads merged into y."""
    return [
        helper.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "vt"], ["ctx"], name="context"),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], name="ctx_t", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["y"], name="merge"),
    ]


def attention_model(scores_read_twice):
    n = [
        helper.make_node("MatMul", ["x", "w"], ["qkv_mm"], name="qkv_mm"),
        helper.make_node("Add", ["qkv_mm", "bias"], ["qkv"], name="qkv_bias"),
        helper.make_node("Split", ["qkv", "thirds"], ["q", "k", "v"], name="split", axis=-1),
    ]
    for name in ("q", "k", "v"):
        n.append(helper.make_node("Reshape", [name, "heads_shape"], [name + "_h"], name=name + "_heads"))
    n += [
        helper.make_node("Transpose", ["q_h"], ["qt"], name="q_t", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k_h"], ["k_t1"], name="k_t1", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k_t1"], ["kt"], name="k_t2", perm=[0, 1, 3, 2]),
        helper.make_node("Transpose", ["v_h"], ["vt"], name="v_t", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="scores"),
        helper.make_node("Div", ["scores", "root_d"], ["scaled"], name="scale"),
        helper.make_node("Add", ["mask", "scaled"], ["masked"], name="mask_add"),
    ] + attention_tail()
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D])]
    if scores_read_twice:
        outputs.append(helper.make_tensor_value_info("scores", TensorProto.FLOAT, [B, H, S, S]))
    inits = [numpy_helper.from_array(W, "w"), numpy_helper.from_array(BIAS, "bias"),
             numpy_helper.from_array(np.array([D, D, D], np.int64), "thirds"),
             numpy_helper.from_array(np.array([B, S, H, HD], np.int64), "heads_shape"),
             numpy_helper.from_array(np.array([B, S, D], np.int64), "merge_shape"),
             numpy_helper.from_array(np.array(math.sqrt(HD), np.float32), "root_d")]
    graph = helper.make_graph(n, "attention",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, D]),
                               helper.make_tensor_value_info("mask", TensorProto.FLOAT, [B, 1, 1, S])],
                              outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def separate_model(bias, k_read_twice):
    """Q, K and V by three projections of x (MatMul, with or without an Add of a bias:
    the slices of W and BIAS, so `reference` holds), K's heads transposed by one
    Transpose; where `k_read_twice`, K's projection is a graph output too."""
    n, inits = [], [numpy_helper.from_array(np.array([B, S, H, HD], np.int64), "heads_shape"),
                    numpy_helper.from_array(np.array([B, S, D], np.int64), "merge_shape"),
                    numpy_helper.from_array(np.array(1 / math.sqrt(HD), np.float32), "scale_c")]
    for i, name in enumerate(("q", "k", "v")):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(W[:, i * D:(i + 1) * D]), "w" + name))
        if bias:
            inits.append(numpy_helper.from_array(BIAS[i * D:(i + 1) * D].copy(), "b" + name))
            n.append(helper.make_node("MatMul", ["x", "w" + name], [name + "_mm"], name=name + "_mm"))
            # The bias on either side of the Add, as exporters write both.
            operands = [name + "_mm", "b" + name] if i != 1 else ["b" + name, name + "_mm"]
            n.append(helper.make_node("Add", operands, [name], name=name + "_bias"))
        else:
            n.append(helper.make_node("MatMul", ["x", "w" + name], [name], name=name + "_mm"))
        n.append(helper.make_node("Reshape", [name, "heads_shape"], [name + "_h"], name=name + "_heads"))
    n += [
        helper.make_node("Transpose", ["q_h"], ["qt"], name="q_t", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k_h"], ["kt"], name="k_t", perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v_h"], ["vt"], name="v_t", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="scores"),
        helper.make_node("Mul", ["scores", "scale_c"], ["scaled"], name="scale"),
        helper.make_node("Add", ["scaled", "mask"], ["masked"], name="mask_add"),
    ] + attention_tail()
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D])]
    if k_read_twice:
        outputs.append(helper.make_tensor_value_info("k", TensorProto.FLOAT, [B, S, D]))
    graph = helper.make_graph(n, "attention_separate",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, D]),
                               helper.make_tensor_value_info("mask", TensorProto.FLOAT, [B, 1, 1, S])],
                              outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nodes_left(err):
    match = re.search(r"(\d+) nodes left", err)
    return int(match.group(1)) if match else -1


def reference(x, mask, bias=True):
    qkv = x.astype(np.float64) @ W + (BIAS if bias else 0)
    heads = lambda t: t.reshape(B, S, H, HD).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = (heads(qkv[..., i * D:(i + 1) * D]) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(HD) + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(B, S, D).astype(np.float32)


def main():
    x = rng.standard_normal((B, S, D)).astype(np.float32)
    mask = np.where(rng.random((B, 1, 1, S)) < 0.2, -1e4, 0).astype(np.float32)
    model = bt.save_model(attention_model(False), "attention.onnx")
    for precision in ("fp16", "bf16", "fp32"):
        pte, err = bt.build(model, "attention_%s.pte" % precision, "--device", "cuda:0",
                            "--precision", precision, env=bt.gpu_env())
        if precision == "fp32":  # cuBLASLt's products stay: the fused kernel is for half types
            bt.check("0 attentions fused" in err, "fp32: fused: %s" % err[-800:])
        else:
            bt.check("1 attentions fused" in err, "%s: not fused: %s" % (precision, err[-800:]))
            bt.check("2 ops (EtrtMatMulBias, EtrtAttention)" in err,
                     "%s: the partition keeps more than the attention: %s" % (precision, err[-800:]))
        outs = bt.run(pte, [x, mask], env=bt.gpu_env(), tag="attention_%s" % precision)
        if outs:
            bt.compare(outs[0], reference(x, mask), precision, "attention (%s)" % precision)
    # The scores are an output too: nothing may be fused away.
    model = bt.save_model(attention_model(True), "attention_scores_read.onnx")
    pte, err = bt.build(model, "attention_scores_read.pte", "--device", "cuda:0", "--precision", "fp16",
                        env=bt.gpu_env())
    bt.check("0 attentions fused" in err, "fused although the scores are read: %s" % err[-800:])
    outs = bt.run(pte, [x, mask], env=bt.gpu_env(), tag="attention_scores_read")
    if outs:
        bt.compare(outs[0], reference(x, mask), "fp16", "attention with its scores read")
    # Three separate projections of x: packed into one product read at three offsets.
    for bias in (True, False):
        tag = "separate_%s" % ("bias" if bias else "matmul")
        model = bt.save_model(separate_model(bias, False), tag + ".onnx")
        op = "EtrtMatMulBias" if bias else "MatMul"
        built = {}
        for pack in ("1", "0"):
            env = bt.gpu_env()
            env["ETRT_PACK_QKV"] = pack
            pte, err = bt.build(model, "%s_%s.pte" % (tag, pack), "--device", "cuda:0",
                                "--precision", "fp16", env=env)
            bt.check("1 attentions fused" in err, "%s: not fused: %s" % (tag, err[-800:]))
            packs = "1" if pack == "1" else "0"
            bt.check("%s Q/K/V projections packed" % packs in err,
                     "%s, ETRT_PACK_QKV=%s: not %s packed: %s" % (tag, pack, packs, err[-800:]))
            ops = "2 ops (%s, EtrtAttention)" if pack == "1" else "4 ops (%s x3, EtrtAttention)"
            bt.check(ops % op in err, "%s, ETRT_PACK_QKV=%s: not %s: %s"
                     % (tag, pack, ops % op, err[-800:]))
            built[pack] = (pte, nodes_left(err))
            outs = bt.run(pte, [x, mask], env=env, tag="%s_%s" % (tag, pack))
            if outs:
                bt.compare(outs[0], reference(x, mask, bias), "fp16",
                           "attention of %s (ETRT_PACK_QKV=%s)" % (tag, pack))
        # One projection node instead of three: Q, K and V, a projection and an attention.
        bt.check(built["1"][1] == 2 and built["0"][1] == 4,
                 "%s: %d nodes left packed, %d separate; expected 2 and 4"
                 % (tag, built["1"][1], built["0"][1]))
        # The program holds the packed weights once, not also the three it came from.
        sizes = [os.path.getsize(built[p][0]) for p in ("1", "0")]
        print("  %s: program %d bytes packed, %d separate" % (tag, sizes[0], sizes[1]))
        bt.check(abs(sizes[0] - sizes[1]) < 4096,
                 "%s: %d bytes packed against %d separate" % (tag, sizes[0], sizes[1]))
    # K's projection is read by the graph too: nothing is packed, K is read where it is.
    model = bt.save_model(separate_model(True, True), "separate_k_read.onnx")
    pte, err = bt.build(model, "separate_k_read.pte", "--device", "cuda:0", "--precision", "fp16",
                        env=bt.gpu_env())
    bt.check("1 attentions fused" in err and "0 Q/K/V projections packed" in err,
             "K read twice: %s" % err[-800:])
    bt.check(nodes_left(err) == 4, "K read twice: %d nodes left, expected 4" % nodes_left(err))
    outs = bt.run(pte, [x, mask], env=bt.gpu_env(), tag="separate_k_read")
    if outs:
        bt.compare(outs[0], reference(x, mask), "fp16", "attention with K read twice")
        bt.compare(outs[1], (x.astype(np.float64) @ W[:, D:2 * D] + BIAS[D:2 * D]).astype(np.float32),
                   "fp16", "K projection read twice")
    bt.finish("test_build_attention")


if __name__ == "__main__":
    main()
