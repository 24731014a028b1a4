"""`etrt build --shape-values`: a model whose Slice bounds are graph inputs, built for
the CPU and for simulated GPUs with the values given, run and compared with NumPy;
the refusals of the command line (no values, bad text) and of the program (other
values at run time)."""
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

    _, err = bt.build(model, "none.pte", "--device", "cpu", expect=2)
    bt.check("pass --shape-values starts:V1,V2" in err, "no values: message lacks the flag: %s" % err)
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
