"""A model whose Slice bounds are graph inputs: built without flags (the values are read
at execute, the output's shape is the run's) and with `etrt build --shape-values` (the
plan specialises), for the CPU and for simulated GPUs, run with several values and
compared with NumPy, with the shapes `etrt run` writes; the refusals of the command
line (bad text) and of the program (other values than those given at build time)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

X = np.arange(24, dtype=np.float32).reshape(4, 6)
STARTS = np.array([1, 0], dtype=np.int64)
ENDS = np.array([3, -1], dtype=np.int64)


def slice_model():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Slice", ["r", "starts", "ends"], ["s"], name="slice"),
        helper.make_node("Neg", ["s"], ["y"], name="neg"),
    ]
    graph = helper.make_graph(nodes, "slice",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
                               helper.make_tensor_value_info("starts", TensorProto.INT64, [2]),
                               helper.make_tensor_value_info("ends", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    model = bt.save_model(slice_model(), "slice.onnx")
    want = -np.maximum(X, 0)[1:3, 0:-1]

    # No flags: the values are read when the program runs, any of them, growing and
    # shrinking the output; the files `etrt run` writes have the run's shape.
    cases = [((1, 0), (3, -1)), ((0, 0), (4, 6)), ((3, 5), (4, 6)), ((2, 1), (2, 3)), ((0, 0), (4, 6))]
    for device, env in (("cpu", bt.cpu_env()), ("cuda:0", bt.gpu_env())):
        tag = device.replace(":", "")
        pte, _ = bt.build(model, "free_%s.pte" % tag, "--device", device, env=env)
        for k, (starts, ends) in enumerate(cases):
            starts, ends = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
            out = bt.run(pte, [X, starts, ends], env=env, tag="free_%s_%d" % (tag, k))
            if out is not None:
                want_k = -np.maximum(X, 0)[starts[0]:ends[0], starts[1]:ends[1]]
                bt.check(out[0].shape == want_k.shape, "%s values %d: shape %s, expected %s" %
                         (device, k, out[0].shape, want_k.shape))
                if out[0].shape == want_k.shape:
                    bt.compare(out[0], want_k, "fp32", "%s free y %d" % (device, k))
    _, err = bt.build(model, "bad.pte", "--shape-values", "starts=1,0", expect=2)
    bt.check("--shape-values 'starts=1,0': expected INPUT:V1,V2" in err, "bad text: %s" % err)
    help_text = bt.etrt(["build", "--help"]).stdout
    bt.check("--shape-values SPEC" in help_text, "--help lacks --shape-values")

    flags = ["--shape-values", "starts:1,0", "--shape-values", "ends:3,-1"]
    pte, _ = bt.build(model, "cpu.pte", "--device", "cpu", *flags)
    out = bt.run(pte, [X, STARTS, ENDS], env=bt.cpu_env(), tag="cpu")
    if out is not None:
        bt.compare(out[0], want, "fp32", "cpu y")
    if bt.run_available():
        result = bt.etrt(["run", pte, "--input", bt.path("cpu_input_0.npy"),
                          "--input", bt.path("cpu_input_2.npy"), "--input", bt.path("cpu_input_2.npy")],
                         env=bt.cpu_env())
        bt.check(result.returncode != 0 and "outside its bounds" in result.stderr,
                 "other values ran: exit %d\n%s" % (result.returncode, result.stderr))

    # Simulated GPUs: Relu and Neg on the GPU, the Slice on the CPU; the value
    # inputs stay on the host (no copies of them).
    pte, _ = bt.build(model, "gpu.pte", "--device", "cuda:0", *flags, env=bt.gpu_env())
    m = bt.method(pte)
    if m is not None:
        devices = bt.tensor_devices(m)
        for index in m["inputs"][1:]:
            bt.check(devices[index] == "cpu", "value input %d lives on %s" % (index, devices[index]))
    out = bt.run(pte, [X, STARTS, ENDS], env=bt.gpu_env(), tag="gpu")
    if out is not None:
        bt.compare(out[0], want, "fp32", "sim y")
    bt.finish("test_build_shape_values")


main()
