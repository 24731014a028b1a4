"""Sequence and optional values through `etrt build` and `etrt run`: the sequence operators
unrolled when the program is built (--sequence NAME:N gives an input's length, its tensors
are the inputs NAME[i]), SequenceMap and a Loop over a sequence inlined, positions, trip
counts and If conditions from graph inputs given with --shape-values, a sequence input
given as a .pb SequenceProto or as a directory of .npy files, the same results on a
simulated GPU, and every refusal with its message."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

OPSET = [helper.make_opsetid("", 17)]
FLOAT = TensorProto.FLOAT


def seq_info(name, elem=FLOAT, shape=None):
    return helper.make_value_info(name, helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(elem, shape)))


def i64(name, *values, scalar=False):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.array(values[0] if scalar else list(values), np.int64), name))


def model(nodes, inputs, outputs, name):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    return bt.save_model(helper.make_model(graph, opset_imports=OPSET), name + ".onnx")


def write_sequence(path, arrays):
    seq = onnx.SequenceProto()
    seq.name = "x"
    seq.elem_type = onnx.SequenceProto.TENSOR
    seq.tensor_values.extend([numpy_helper.from_array(a) for a in arrays])
    with open(path, "wb") as f:
        f.write(seq.SerializeToString())


def run(pte, inputs, tag, env=None):
    """inputs: paths; returns the output arrays in order, or None (recorded)."""
    out = bt.path(tag)
    os.makedirs(out, exist_ok=True)
    args = ["run", pte, "--output-dir", out]
    for p in inputs:
        args += ["--input", p]
    r = bt.etrt(args, env=env or bt.cpu_env())
    if not bt.check(r.returncode == 0, "%s: etrt run: %s%s" % (tag, r.stdout, r.stderr)):
        return None
    outputs = []
    while os.path.exists(os.path.join(out, "output_%d.npy" % len(outputs))):
        outputs.append(np.load(os.path.join(out, "output_%d.npy" % len(outputs))))
    return outputs


def same(got, want, what):
    if got is None:
        return
    bt.check(len(got) == len(want), "%s: %d outputs, expected %d" % (what, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        bt.check(g.shape == w.shape and g.dtype == w.dtype and np.allclose(g, w),
                 "%s: output %d is %s %s %s, expected %s %s %s" % (what, i, g.dtype, g.shape, g, w.dtype,
                                                                  w.shape, w))


def test_operators():
    """Every sequence operator on a sequence input of three tensors of different widths."""
    nodes = [
        helper.make_node("SequenceInsert", ["x", "t"], ["s1"]),
        i64("zero", 0, scalar=True), i64("last", -1, scalar=True), i64("one", 1, scalar=True),
        helper.make_node("SequenceInsert", ["s1", "t", "zero"], ["s2"]),
        helper.make_node("SequenceErase", ["s2", "last"], ["s3"]),
        helper.make_node("SequenceLength", ["s3"], ["n"]),
        helper.make_node("SequenceAt", ["s3", "one"], ["a"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["c"], axis=1),
        helper.make_node("SequenceConstruct", ["t", "t"], ["pair"]),
        helper.make_node("ConcatFromSequence", ["pair"], ["stacked"], axis=-1, new_axis=1),
        helper.make_node("SplitToSequence", ["t"], ["cols"], axis=1, keepdims=0),
        i64("sizes", 1, 2),
        helper.make_node("SplitToSequence", ["t", "sizes"], ["parts"], axis=1),
        helper.make_node("Optional", ["t"], ["o"]),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("OptionalGetElement", ["o"], ["got"]),
        helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(FLOAT, [2])),
        helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=FLOAT),
        helper.make_node("SequenceLength", ["empty"], ["n_empty"]),
        helper.make_node("Identity", ["cols"], ["cols_out"]),
    ]
    outputs = [helper.make_tensor_value_info(n, t, shape) for n, t, shape in [
        ("n", TensorProto.INT64, []), ("a", FLOAT, [2, 1]), ("c", FLOAT, [2, 9]), ("stacked", FLOAT, [2, 3, 2]),
        ("has", TensorProto.BOOL, []), ("got", FLOAT, [2, 3]), ("has_none", TensorProto.BOOL, []),
        ("n_empty", TensorProto.INT64, [])]]
    outputs += [seq_info("cols_out"), seq_info("parts")]
    path = model(nodes, [seq_info("x", FLOAT, [2, None]), helper.make_tensor_value_info("t", FLOAT, [2, 3])],
                 outputs, "seq_ops")
    xs = [np.arange(2 * w, dtype=np.float32).reshape(2, w) + w for w in (1, 2, 3)]
    t = np.arange(6, dtype=np.float32).reshape(2, 3) * -1
    shapes = sum([["--shape", "x[%d]:2x%d" % (i, a.shape[1])] for i, a in enumerate(xs)], [])
    pte, _ = bt.build(path, "seq_ops.pte", "--device", "cpu", "--sequence", "x:3", *shapes)
    s3 = [t] + xs  # t inserted at the back, then at the front, then the last removed
    want = [np.array(4, np.int64), xs[0], np.concatenate(s3, axis=1), np.stack([t, t], axis=-1),
            np.array(True), t, np.array(False), np.array(0, np.int64)]
    want += [t[:, j] for j in range(3)] + [t[:, :1], t[:, 1:]]
    # the sequence as a .pb SequenceProto, and as a directory of .npy files
    write_sequence(bt.path("xs.pb"), xs)
    np.save(bt.path("t.npy"), t)
    same(run(pte, [bt.path("xs.pb"), bt.path("t.npy")], "ops_pb"), want, "sequence operators (.pb)")
    os.makedirs(bt.path("xs_dir"), exist_ok=True)
    for i, a in enumerate(xs):
        np.save(bt.path("xs_dir/%d.npy" % i), a)
    same(run(pte, [bt.path("xs_dir"), bt.path("t.npy")], "ops_dir"), want, "sequence operators (directory)")
    # on a simulated GPU: the same results (sequences are unrolled: tensors only)
    pte_gpu, _ = bt.build(path, "seq_ops_gpu.pte", "--device", "cuda:0", "--sequence", "x:3", *shapes,
                          env=bt.sim_env(2))
    same(run(pte_gpu, [bt.path("xs.pb"), bt.path("t.npy")], "ops_sim", env=bt.sim_env(2)), want,
         "sequence operators (sim)")
    # one tensor too few
    r = bt.etrt(["run", pte, "--input", bt.path("xs_dir")], env=bt.cpu_env())
    bt.check(r.returncode == 2 and "takes 4 input(s), 3 given" in r.stderr, "input count: " + r.stderr)
    r = bt.etrt(["run", pte, "--input", bt.path("xs.pb"), "--input", bt.path("t.npy"), "--output-format", "csv"],
                env=bt.cpu_env())
    bt.check(r.returncode == 2 and "--output-format takes npy or pb, not 'csv'" in r.stderr,
             "--output-format: " + r.stderr)


def test_map_and_loop():
    """SequenceMap inlined per element; a Loop building a sequence unrolled per iteration."""
    body = helper.make_graph([helper.make_node("Mul", ["e", "k"], ["y"])], "body",
                             [helper.make_tensor_value_info("e", FLOAT, [3]),
                              helper.make_tensor_value_info("k", FLOAT, [3])],
                             [helper.make_tensor_value_info("y", FLOAT, [3])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("SequenceAt", ["x", "i"], ["xi"]),
         helper.make_node("Cast", ["i"], ["fi"], to=FLOAT),
         helper.make_node("Add", ["xi", "fi"], ["z"]),
         helper.make_node("SequenceInsert", ["acc_in", "z"], ["acc_out"])], "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), seq_info("acc_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), seq_info("acc_out")])
    nodes = [helper.make_node("SequenceMap", ["x", "k"], ["m"], body=body),
             helper.make_node("SequenceLength", ["x"], ["n"]),
             helper.make_node("Constant", [], ["true"], value=helper.make_tensor("true", TensorProto.BOOL, [], [1])),
             helper.make_node("SequenceEmpty", [], ["start"]),
             helper.make_node("Loop", ["n", "true", "start"], ["built"], body=loop_body)]
    path = model(nodes, [seq_info("x", FLOAT, [3]), helper.make_tensor_value_info("k", FLOAT, [3])],
                 [seq_info("m"), seq_info("built")], "seq_map")
    pte, _ = bt.build(path, "seq_map.pte", "--device", "cpu", "--sequence", "x:2")
    xs = [np.array([1, 2, 3], np.float32), np.array([-1, 0.5, 4], np.float32)]
    k = np.array([2, 3, 4], np.float32)
    write_sequence(bt.path("map_x.pb"), xs)
    np.save(bt.path("k.npy"), k)
    same(run(pte, [bt.path("map_x.pb"), bt.path("k.npy")], "map"), [xs[0] * k, xs[1] * k, xs[0], xs[1] + 1],
         "SequenceMap and Loop")


def refused(args, text, what):
    r = bt.etrt(["build"] + args + ["-o", bt.path("refused.pte"), "--device", "cpu"], env=bt.cpu_env())
    bt.check(r.returncode == 2 and text in r.stderr, "%s: exit %d: %s" % (what, r.returncode, r.stderr))


def test_refusals():
    x = seq_info("x", FLOAT, [2])
    out = [helper.make_tensor_value_info("y", FLOAT, [2])]
    at = model([i64("p", 1, scalar=True), helper.make_node("SequenceAt", ["x", "p"], ["y"])], [x], out, "seq_at")
    refused([at], "input 'x' is a sequence: give its length with --sequence x:LENGTH", "no length")
    refused([at, "--sequence", "x:none"], "input 'x' is a sequence, not an optional", "none for a sequence")
    refused([at, "--sequence", "q:2"], "sequence 'q:2': the model has no sequence or optional input of that name",
            "unknown input")
    refused([at, "--sequence", "x:two"], "sequence 'x:two': the length 'two' is not a number 0..4096 or 'none'",
            "bad length")
    refused([at, "--sequence", "x:1"], "position 1 is outside a sequence of 1 tensors", "position out of range")
    p_in = model([helper.make_node("SequenceAt", ["x", "p"], ["y"])],
                 [x, helper.make_tensor_value_info("p", TensorProto.INT64, [])], out, "seq_at_input")
    refused([p_in, "--sequence", "x:2"], "position 'p' must be known when the program is built (a sequence is "
            "unrolled then): an int32 or int64 constant with one value, or a graph input given one with "
            "--shape-values p:V", "position from an input")
    # given with --shape-values, the program is built for that position
    pte, _ = bt.build(p_in, "seq_at_input.pte", "--device", "cpu", "--sequence", "x:2", "--shape-values", "p:1")
    xs = [np.array([1, 2], np.float32), np.array([3, 4], np.float32)]
    write_sequence(bt.path("at_x.pb"), xs)
    np.save(bt.path("p.npy"), np.array(1, np.int64))
    same(run(pte, [bt.path("at_x.pb"), bt.path("p.npy")], "at_input"), [xs[1]], "position from --shape-values")
    relu = model([helper.make_node("Relu", ["x"], ["y"])], [x], out, "seq_relu")
    refused([relu, "--sequence", "x:2"], "'x' is a sequence or optional value, read where a tensor is expected",
            "sequence as a tensor")
    none = model([helper.make_node("Optional", [], ["o"], type=helper.make_tensor_type_proto(FLOAT, [2])),
                  helper.make_node("OptionalGetElement", ["o"], ["y"])], [helper.make_tensor_value_info("t", FLOAT, [2])],
                 out, "opt_none")
    refused([none], "the optional 'o' holds no value", "absent optional read")
    empty = model([helper.make_node("SequenceEmpty", [], ["s"]),
                   helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                  [helper.make_tensor_value_info("t", FLOAT, [2])], out, "seq_empty_concat")
    refused([empty], "the sequence 's' is empty", "concatenating an empty sequence")
    branch = helper.make_graph([helper.make_node("SequenceConstruct", ["t"], ["s"])], "b", [], [seq_info("s")])
    twice = helper.make_graph([helper.make_node("Neg", ["t"], ["n"]), helper.make_node("SequenceConstruct", ["t", "n"], ["s2"])],
                              "b2", [], [seq_info("s2")])
    if_seq = model([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=twice)],
                   [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("t", FLOAT, [2])], [seq_info("y")], "if_seq")
    refused([if_seq], "node 0 (If): its branches give sequences or optionals, so its condition 'c' must be known "
            "when the program is built (a constant, or a graph input given with --shape-values NAME:0|1)",
            "If giving a sequence")
    t2 = np.array([1, 2], np.float32)
    for cond, want in (("1", [t2]), ("0", [t2, -t2])):
        pte, _ = bt.build(if_seq, "if_seq_%s.pte" % cond, "--device", "cpu", "--shape-values", "c:" + cond)
        np.save(bt.path("c.npy"), np.array(cond == "1"))
        np.save(bt.path("t2.npy"), t2)
        same(run(pte, [bt.path("c.npy"), bt.path("t2.npy")], "if_" + cond), want, "If over sequences, c=" + cond)
    # a Loop over a sequence whose trip count is an input
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("SequenceInsert", ["acc_in", "t"], ["acc_out"])], "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), seq_info("acc_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), seq_info("acc_out")])
    loop = model([helper.make_node("SequenceEmpty", [], ["start"]),
                  helper.make_node("Loop", ["m", "", "start"], ["y"], body=loop_body)],
                 [helper.make_tensor_value_info("m", TensorProto.INT64, []),
                  helper.make_tensor_value_info("t", FLOAT, [2])], [seq_info("y")], "loop_m")
    refused([loop], "the trip count 'm' of a Loop carrying a sequence must be known when the program is built "
            "(a constant, or a graph input given with --shape-values NAME:N)", "Loop trip count from an input")
    pte, _ = bt.build(loop, "loop_m.pte", "--device", "cpu", "--shape-values", "m:3")
    np.save(bt.path("m.npy"), np.array(3, np.int64))
    same(run(pte, [bt.path("m.npy"), bt.path("t2.npy")], "loop_m"), [t2] * 3, "Loop trip count from --shape-values")


def test_more_refusals():
    """The refusals of each operator's unrolling, with their messages."""
    x = seq_info("x", FLOAT, [2])
    t_in = helper.make_tensor_value_info("t", FLOAT, [2, 3])
    out = [helper.make_tensor_value_info("y", FLOAT, [2])]
    seq_out = [seq_info("y")]
    cases = [
        ([i64("p", 5, scalar=True), helper.make_node("SequenceInsert", ["x", "t2", "p"], ["y"])],
         [x, helper.make_tensor_value_info("t2", FLOAT, [2])], seq_out, ["--sequence", "x:2"],
         "position 5 is outside [-2, 2]"),
        ([i64("p", -3, scalar=True), helper.make_node("SequenceErase", ["x", "p"], ["y"])], [x], seq_out,
         ["--sequence", "x:2"], "position -3 is outside a sequence of 2 tensors"),
        ([helper.make_node("SequenceErase", ["x"], ["y"])], [x], seq_out, ["--sequence", "x:0"],
         "position -1 is outside a sequence of 0 tensors"),
        ([helper.make_node("SplitToSequence", ["t"], ["y"], axis=2)], [t_in], seq_out, [],
         "axis 2 is outside rank 2"),
        ([i64("k", 0, scalar=True), helper.make_node("SplitToSequence", ["t", "k"], ["y"], axis=1)], [t_in], seq_out,
         [], "split 0 is not positive"),
        ([helper.make_node("SplitToSequence", ["u"], ["y"])], [helper.make_tensor_value_info("u", FLOAT, ["n"])],
         seq_out, [], "axis 0 of 'u' must have a fixed size when the program is built"),
        ([helper.make_node("SplitToSequence", ["t", "k"], ["y"])],
         [t_in, helper.make_tensor_value_info("k", TensorProto.INT64, [2])], seq_out, [],
         "split 'k' must be known when the program is built"),
        ([helper.make_node("Optional", ["x"], ["o"]), helper.make_node("Optional", ["o"], ["y"])], [x],
         [helper.make_value_info("y", helper.make_optional_type_proto(helper.make_optional_type_proto(
             helper.make_sequence_type_proto(helper.make_tensor_type_proto(FLOAT, [2])))))],
         ["--sequence", "x:1"], "an optional of an optional is not supported"),
        ([helper.make_node("Identity", ["x"], ["y"])],
         [helper.make_value_info("x", helper.make_sequence_type_proto(helper.make_sequence_type_proto(
             helper.make_tensor_type_proto(FLOAT, [2]))))], seq_out, ["--sequence", "x:1"],
         "input 'x': only sequences and optionals of tensors (and optional sequences of tensors) are supported"),
        ([helper.make_node("SequenceMap", ["x", "z"], ["y"], body=helper.make_graph(
            [helper.make_node("Add", ["a", "b"], ["c"])], "b",
            [helper.make_tensor_value_info("a", FLOAT, [2]), helper.make_tensor_value_info("b", FLOAT, [2])],
            [helper.make_tensor_value_info("c", FLOAT, [2])]))], [x, seq_info("z", FLOAT, [2])], seq_out,
         ["--sequence", "x:2", "--sequence", "z:3"], "input 1 'z' is not a sequence of 2 tensors like input 0"),
        ([helper.make_node("SequenceMap", ["x"], ["y"], body=helper.make_graph(
            [helper.make_node("SequenceConstruct", ["a"], ["c"])], "b",
            [helper.make_tensor_value_info("a", FLOAT, [2])], [seq_info("c")]))], [x], seq_out,
         ["--sequence", "x:1"], "body output 0 is a sequence (SequenceMap's body gives tensors)"),
        ([helper.make_node("Loop", ["", "", "x"], ["y", "scan"], body=helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["s_in"], ["s_out"]),
             helper.make_node("Cast", ["i"], ["f"], to=FLOAT)], "b",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), seq_info("s_in")],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), seq_info("s_out"),
             helper.make_tensor_value_info("f", FLOAT, [])]))], [x],
         seq_out + [helper.make_tensor_value_info("scan", FLOAT, [None])], ["--sequence", "x:1"],
         "a Loop carrying a sequence is unrolled at import, which takes a body of 3 inputs and 2 outputs and no "
         "scan outputs (it has 3 and 3)"),
        ([helper.make_node("Loop", ["", "", "x"], ["y"], body=helper.make_graph(
            [helper.make_node("Less", ["i", "m"], ["c_out"]), helper.make_node("Identity", ["s_in"], ["s_out"])], "b",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), seq_info("s_in")],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), seq_info("s_out")]))],
         [x, helper.make_tensor_value_info("m", TensorProto.INT64, [])], seq_out, ["--sequence", "x:1"],
         "the condition a Loop carrying a sequence computes must be known when the program is built"),
    ]
    for k, (nodes, inputs, outputs, flags, text) in enumerate(cases):
        path = model(nodes, inputs, outputs, "refusal_%d" % k)
        refused([path] + flags, text, "refusal %d" % k)


if __name__ == "__main__":
    test_operators()
    test_map_and_loop()
    test_refusals()
    test_more_refusals()
    bt.finish("test_build_sequences")
