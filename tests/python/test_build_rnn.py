"""`etrt build` of recurrent nodes with their list-of-strings activations: an RNN
with Relu (and Tanh's default for comparison) and a bidirectional GRU with
(Sigmoid, Relu) per direction, against NumPy; a string holding a comma is
refused at import."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(5)
H, I, T, B = 3, 2, 4, 2


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def relu(v):
    return np.maximum(v, 0.0)


def model(op, gates, acts, direction, name):
    dirs = 2 if direction == "bidirectional" else 1
    P = {"W": (rng.standard_normal((dirs, gates * H, I)) * 0.5).astype(np.float32),
         "R": (rng.standard_normal((dirs, gates * H, H)) * 0.5).astype(np.float32),
         "Bias": (rng.standard_normal((dirs, 2 * gates * H)) * 0.5).astype(np.float32)}
    attrs = {"hidden_size": H, "direction": direction}
    if acts:
        attrs["activations"] = acts
    node = helper.make_node(op, ["x", "W", "R", "Bias"], ["", "y"], name=name, **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dirs, B, H])],
                              [numpy_helper.from_array(v, k) for k, v in P.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), P


def rnn_ref(x, P, f):
    h = np.zeros((B, H))
    for t in range(T):
        h = f(x[t] @ P["W"][0].T + h @ P["R"][0].T + P["Bias"][0, :H] + P["Bias"][0, H:])
    return h[None].astype(np.float32)


def gru_ref(x, P, f, g):
    out = []
    for d, steps in ((0, range(T)), (1, reversed(range(T)))):
        W, R, Wb, Rb = P["W"][d], P["R"][d], P["Bias"][d, :3 * H], P["Bias"][d, 3 * H:]
        h = np.zeros((B, H))
        for t in steps:
            xp, hp = x[t] @ W.T + Wb, h @ R.T + Rb
            z = f(xp[:, :H] + hp[:, :H])
            r = f(xp[:, H:2 * H] + hp[:, H:2 * H])
            hh = g(xp[:, 2 * H:] + (r * h) @ R[2 * H:].T + Rb[2 * H:])
            h = (1 - z) * hh + z * h
        out.append(h)
    return np.stack(out).astype(np.float32)


def main():
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    for acts, f in ((["Relu"], relu), (None, np.tanh)):
        m, P = model("RNN", 1, acts, "forward", "rnn")
        pte, _ = bt.build(bt.save_model(m, "rnn.onnx"), "rnn.pte", "--device", "cpu")
        outs = bt.run(pte, [x], env=bt.cpu_env(), tag="rnn")
        if outs:
            bt.compare(outs[0], rnn_ref(x, P, f), "fp32", "RNN with %s" % (acts or "the default Tanh"))
    m, P = model("GRU", 3, ["Sigmoid", "Relu", "sigmoid", "relu"], "bidirectional", "gru")
    pte, _ = bt.build(bt.save_model(m, "gru.onnx"), "gru.pte", "--device", "cpu")
    outs = bt.run(pte, [x], env=bt.cpu_env(), tag="gru")
    if outs:
        bt.compare(outs[0], gru_ref(x, P, sigmoid, relu), "fp32", "bidirectional GRU (Sigmoid, Relu)")
    m, _ = model("RNN", 1, ["Relu,Tanh"], "forward", "comma")
    _, err = bt.build(bt.save_model(m, "comma.onnx"), "comma.pte", "--device", "cpu", expect=2)
    bt.check("holds a ','" in err, "a comma inside a string is refused: %s" % err)
    bt.finish("test_build_rnn")


if __name__ == "__main__":
    main()
