"""target_device and device-aware planning through the command line, on simulated
GPUs (ETRT_DEVICE=sim:4), checked with `etrt inspect --json` and run with `etrt run`:

- the seed's plan: a single-engine build for cuda:0 is byte-identical with and without
  --target-device cuda:0; a build for cuda:1 labels its delegate and boundary tensors
  with index 1; --target-device cuda:3 is used verbatim for every GPU partition; two
  partitions on two devices (--place) are each labelled with their own device (the
  unreadable-index fallback to cuda:0 is a C unit test: test_builder_emit);
- planning: a GPU, CPU, GPU split has copies exactly at the boundaries; a value passed
  between two partitions on one GPU has none; --io-on-device plans no copies.
"""
import filecmp
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

rng = np.random.default_rng(4)
W1 = (rng.standard_normal((8, 12)) * 0.4).astype(np.float32)
W2 = (rng.standard_normal((12, 5)) * 0.4).astype(np.float32)
ENV = bt.sim_env(4)


def chain_model():
    """x[2,8] -> mm1 -> relu1 -> neg1 -> mm2 -> y"""
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name="mm1"),
             helper.make_node("Relu", ["h"], ["a"], name="relu1"),
             helper.make_node("Neg", ["a"], ["b"], name="neg1"),
             helper.make_node("MatMul", ["b", "W2"], ["y"], name="mm2")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
                              [numpy_helper.from_array(W1, "W1"), numpy_helper.from_array(W2, "W2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def chain_reference(x):
    return -np.maximum(x @ W1, 0) @ W2


def branch_model():
    """x -> r1:Relu -> a -> r2:Sigmoid -> c;  x -> n1:Neg -> b;  y = c + b"""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1"),
             helper.make_node("Neg", ["x"], ["b"], name="n1"),
             helper.make_node("Sigmoid", ["a"], ["c"], name="r2"),
             helper.make_node("Add", ["c", "b"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "branch", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def delegate_args(m):
    return [ins["args"] for ins in m["instructions"] if ins["kind"] == "delegate"]


def check_delegate_devices(m, expected, what):
    """Every tensor a delegate reads or writes is on that delegate's device."""
    devices = bt.tensor_devices(m)
    for k, args in enumerate(delegate_args(m)):
        got = sorted(set(devices[a] for a in args))
        bt.check(got == [expected[k]], "%s: delegate %d tensors on %s, expected %s" % (what, k, got, expected[k]))


def main():
    chain = bt.save_model(chain_model(), "chain.onnx")
    x = rng.standard_normal((2, 8)).astype(np.float32)

    # Single engine on cuda:0: derived label == explicit --target-device cuda:0, byte for byte.
    derived, _ = bt.build(chain, "derived.pte", "--device", "cuda:0", env=ENV)
    explicit, _ = bt.build(chain, "explicit.pte", "--device", "cuda:0", "--target-device", "cuda:0", env=ENV)
    again, _ = bt.build(chain, "again.pte", "--device", "cuda:0", env=ENV)
    bt.check(filecmp.cmp(derived, explicit, shallow=False), "cuda:0 build differs from --target-device cuda:0")
    bt.check(filecmp.cmp(derived, again, shallow=False), "two identical builds differ")
    m = bt.method(derived)
    if m:
        bt.check(bt.labels(m) == ["cuda:0"], "single engine label: %s" % bt.labels(m))
    outs = bt.run(derived, [x], env=ENV, tag="cuda0")
    if outs:
        bt.compare(outs[0], chain_reference(x), "fp32", "chain on sim cuda:0")

    # cuda:1: the delegate and its boundary tensors say 1; its buffer is on cuda:1.
    pte, _ = bt.build(chain, "cuda1.pte", "--device", "cuda:1", env=ENV)
    m = bt.method(pte)
    if m:
        bt.check(bt.labels(m) == ["cuda:1"], "cuda:1 label: %s" % bt.labels(m))
        check_delegate_devices(m, ["cuda:1"], "cuda:1 build")
        bt.check(m["non_const_buffer_device"] == [{"buffer_idx": 2, "device": "cuda:1"}],
                 "cuda:1 buffer: %s" % m["non_const_buffer_device"])
    outs = bt.run(pte, [x], env=ENV, tag="cuda1")
    if outs:
        bt.compare(outs[0], chain_reference(x), "fp32", "chain on sim cuda:1")

    # --target-device cuda:3, verbatim for every GPU partition (GPU, CPU, GPU).
    pte, _ = bt.build(chain, "cuda3.pte", "--device", "cuda:0", "--target-device", "cuda:3",
                      "--place", "neg1=cpu", env=ENV)
    m = bt.method(pte)
    if m:
        bt.check(bt.labels(m) == ["cuda:3", "cpu", "cuda:3"], "verbatim labels: %s" % bt.labels(m))
        check_delegate_devices(m, ["cuda:3", "cpu", "cuda:3"], "--target-device cuda:3")

    # Two partitions on two devices: each labelled with its own.
    pte, err = bt.build(chain, "two_devices.pte", "--device", "cuda:0", "--place", "mm2=cuda:1", env=ENV)
    bt.check("partition 1 cuda:1: 1 op (MatMul)" in err, "progress shows the placement: %s" % err)
    m = bt.method(pte)
    if m:
        bt.check(bt.labels(m) == ["cuda:0", "cuda:1"], "per-partition labels: %s" % bt.labels(m))
        check_delegate_devices(m, ["cuda:0", "cuda:1"], "two devices")
        bt.check(m["non_const_buffer_device"] == [{"buffer_idx": 2, "device": "cuda:0"},
                                                  {"buffer_idx": 3, "device": "cuda:1"}],
                 "one buffer per GPU: %s" % m["non_const_buffer_device"])
        bt.check(bt.instruction_summary(m) == ["h2d", "delegate 0", "d2h", "h2d", "delegate 1", "d2h"],
                 "between GPUs through the host: %s" % bt.instruction_summary(m))
    outs = bt.run(pte, [x], env=ENV, tag="two_devices")
    if outs:
        bt.compare(outs[0], chain_reference(x), "fp32", "chain over cuda:0 and cuda:1")

    # GPU, CPU, GPU: copies exactly at the boundaries.
    pte, _ = bt.build(chain, "split.pte", "--device", "cuda:0", "--place", "neg1=cpu", env=ENV)
    m = bt.method(pte)
    if m:
        bt.check(bt.instruction_summary(m) == ["h2d", "delegate 0", "d2h", "delegate 1", "h2d", "delegate 2", "d2h"],
                 "GPU/CPU/GPU copies: %s" % bt.instruction_summary(m))
        check_delegate_devices(m, ["cuda:0", "cpu", "cuda:0"], "GPU/CPU/GPU")
        devices = bt.tensor_devices(m)
        bt.check([devices[i] for i in m["inputs"]] == ["cpu"] and [devices[i] for i in m["outputs"]] == ["cpu"],
                 "method I/O on the host")
        for ins in m["instructions"]:
            if ins["kind"] == "kernel":
                src, dst, ret = ins["args"]
                bt.check(dst == ret, "out-variant args [self, out, out]: %s" % ins["args"])
                want = ("cpu", "cuda:0") if "_h2d_copy" in ins["op"] else ("cuda:0", "cpu")
                bt.check((devices[src], devices[dst]) == want, "copy %s between %s" % (ins["op"], want))
    outs = bt.run(pte, [x], env=ENV, tag="split")
    if outs:
        bt.compare(outs[0], chain_reference(x), "fp32", "GPU/CPU/GPU chain")

    # Two partitions on one GPU: the value between them stays there.
    branch = bt.save_model(branch_model(), "branch.onnx")
    pte, _ = bt.build(branch, "branch.pte", "--device", "cuda:0", "--place", "n1=cpu", env=ENV)
    m = bt.method(pte)
    if m:
        args = delegate_args(m)
        bt.check(len(args) == 3, "three partitions: %s" % bt.instruction_summary(m))
        if len(args) == 3:
            a_dev = args[0][1]
            bt.check(a_dev in args[2], "partition 2 reads partition 0's output in place")
            copied = [ins["args"][0] for ins in m["instructions"] if ins["kind"] == "kernel"]
            bt.check(a_dev not in copied, "no copy of the value passed between GPU partitions: %s" % m["instructions"])
            bt.check(bt.instruction_summary(m) == ["h2d", "delegate 0", "delegate 1", "h2d", "delegate 2", "d2h"],
                     "branch copies: %s" % bt.instruction_summary(m))
    xb = rng.standard_normal((3, 4)).astype(np.float32)
    outs = bt.run(pte, [xb], env=ENV, tag="branch")
    if outs:
        bt.compare(outs[0], 1 / (1 + np.exp(-np.maximum(xb, 0))) - xb, "fp32", "branch over one GPU")

    # Device I/O: no copies, method tensors on the device and unplanned.
    pte, _ = bt.build(chain, "io.pte", "--device", "cuda:0", "--io-on-device", env=ENV)
    m = bt.method(pte)
    if m:
        bt.check(bt.instruction_summary(m) == ["delegate 0"], "no copies: %s" % bt.instruction_summary(m))
        devices = bt.tensor_devices(m)
        bt.check([devices[i] for i in m["inputs"] + m["outputs"]] == ["cuda:0", "cuda:0"], "device I/O")

    # Placements that cannot be honoured are refused.
    _, err = bt.build(chain, "refused.pte", "--place", "nosuchnode=cpu", env=ENV, expect=2)
    bt.check("no node named 'nosuchnode'" in err, "unknown node: %s" % err)
    _, err = bt.build(chain, "refused.pte", "--place", "mm1=gpu7", env=ENV, expect=2)
    bt.check("placement 0" in err, "bad device: %s" % err)
    _, err = bt.build(chain, "refused.pte", "--place", "mm1", env=ENV, expect=2)
    bt.check("NODE=DEVICE" in err, "bad syntax: %s" % err)
    bt.finish("test_build_devices")


if __name__ == "__main__":
    main()
