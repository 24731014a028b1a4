"""`etrt test` on bundled programs (.bpte) and methods by name: every case of every
method, a failing case (exit 1), --method, tolerances, bad files and usage (exit 2,
nothing on standard output); `etrt run --method` on a two-method program, an unknown
method refused with the list, bad input at the method's edge (count, dtype, shape
bound) refused with no output written; `etrt inspect` listing both methods."""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

FIXTURE_TOOL = os.path.join(bt.BUILD_DIR, "tests", "etrt_bundled_fixture")
# ExecuTorch's own bundle, where one has been exported (skipped when absent).
EXECUTORCH_BPTE = os.environ.get(
    "ETRT_BPTE_FIXTURE",
    os.path.join(os.environ.get("ETRT_FIXTURES_DIR", os.path.join(bt.ROOT, "tests", "data")),
                 "executorch", "matmul_mlp_bundled.bpte"))


def run(args, env=None):
    return subprocess.run([bt.ETRT] + args, capture_output=True, text=True, env=env or bt.cpu_env())


def make_fixtures():
    r = subprocess.run([FIXTURE_TOOL, bt.TMP], capture_output=True, text=True)
    bt.check(r.returncode == 0, "fixture tool: " + r.stderr)
    return bt.path("two.pte"), bt.path("two.bpte"), bt.path("two_wrong.bpte")


def test_bundles(pte, good, wrong):
    r = run(["test", good])
    bt.check(r.returncode == 0, "all cases pass: %d %s" % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    bt.check(lines[:3] == ["method forward, case 0: passed, worst error 0",
                           "method forward, case 1: passed, worst error 0",
                           "method double, case 0: passed, worst error 0"], "case lines: %r" % lines)
    bt.check(lines[-1:] == ["3 passed, 0 failed"], "summary: %r" % lines)
    r = run(["test", wrong])
    bt.check(r.returncode == 1, "a failing case exits 1: %d" % r.returncode)
    bt.check("method forward, case 1: failed, worst error 0.5" in r.stdout and
             r.stdout.endswith("2 passed, 1 failed\n"), "failing case reported: " + r.stdout)
    r = run(["test", wrong, "--method", "double"])
    bt.check(r.returncode == 0 and r.stdout == "method double, case 0: passed, worst error 0\n1 passed, 0 failed\n",
             "--method double: " + r.stdout)
    # Largest |expected| of the output is 4.5: rtol 0.2 allows 0.9, atol 0.6 allows 0.6.
    for option in (["--rtol", "0.2"], ["--atol", "0.6"]):
        r = run(["test", wrong] + option)
        bt.check(r.returncode == 0 and "3 passed, 0 failed" in r.stdout, "%s: %s" % (option, r.stdout))
    r = run(["test", wrong, "--rtol", "0.05"])
    bt.check(r.returncode == 1, "rtol 0.05 still fails: " + r.stdout)
    r = run(["test", "--help"])
    bt.check(r.returncode == 0 and "default 1e-05" in r.stdout and "|actual - expected|" in r.stdout,
             "--help states the tolerance")


def test_bad_files(pte, good):
    data = open(good, "rb").read()
    truncated = bt.path("truncated.bpte")
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    cases = [
        (["test", pte], "this is an ExecuTorch program (identifier 'ET12'), not a bundled program"),
        (["test", truncated], "byte offset"),
        (["test", bt.path("missing.bpte")], "missing.bpte"),
        (["test", good, "--method", "triple"], "no test cases for method 'triple' (it tests 'forward', 'double')"),
        (["test"], "usage: etrt test"),
        (["test", good, "--rtol", "-1"], "--rtol '-1'"),
        (["test", good, "--atol"], "--atol needs a value"),
        (["test", good, "--bogus"], "unknown option"),
        (["test", good, good], "one FILE only"),
    ]
    for args, text in cases:
        r = run(args)
        bt.check(r.returncode == 2 and r.stdout == "" and text in r.stderr,
                 "%s: exit 2 with '%s': %d %r %r" % (args, text, r.returncode, r.stdout, r.stderr))


def test_methods_by_name(pte):
    out = bt.path("double_out")
    x = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
    np.save(bt.path("x.npy"), x)
    r = run(["run", pte, "--method", "double", "--input", bt.path("x.npy"), "--output-dir", out])
    bt.check(r.returncode == 0, "run --method double: " + r.stderr)
    if r.returncode == 0:
        bt.check(np.array_equal(np.load(os.path.join(out, "output_0.npy")), 2 * x), "double gives x + x")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, np.float32)
    np.save(bt.path("a.npy"), a)
    np.save(bt.path("b.npy"), b)
    out = bt.path("forward_out")
    r = run(["run", pte, "--input", bt.path("a.npy"), "--input", bt.path("b.npy"), "--output-dir", out])
    bt.check(r.returncode == 0, "run forward (the default): " + r.stderr)
    if r.returncode == 0:
        bt.check(np.array_equal(np.load(os.path.join(out, "output_0.npy")), a + b), "forward gives a + b")

    refused = bt.path("refused_out")
    np.save(bt.path("a64.npy"), a.astype(np.float64))
    np.save(bt.path("a33.npy"), np.zeros((3, 3), np.float32))
    cases = [
        (["--method", "triple", "--random-inputs", "1"],
         "the program has no method 'triple'; its 2 methods are: 'forward', 'double' (--method NAME)"),
        (["--input", bt.path("a.npy")], "method 'forward' takes 2 input(s), 1 given"),
        (["--input", bt.path("a64.npy"), "--input", bt.path("b.npy")],
         "method 'forward', input 0: dtype float64, the method takes float32"),
        (["--input", bt.path("a33.npy"), "--input", bt.path("b.npy")],
         "method 'forward', input 0, axis 0: size 3, the method takes at most 2"),
        (["--method", "double", "--input", bt.path("a.npy")],
         "method 'double', input 0: rank 2, the method takes rank 1"),
    ]
    for args, text in cases:
        r = run(["run", pte] + args + ["--output-dir", refused])
        bt.check(r.returncode == 2 and text in r.stderr, "%s: exit 2 with '%s': %d %r" % (args, text, r.returncode, r.stderr))
        bt.check(not os.path.exists(refused), "%s: no output written" % args)


def test_many_methods():
    many = bt.path("many.pte")
    names = ["method_%02d" % k for k in range(30)]
    r = run(["run", many, "--method", "method_100", "--random-inputs", "1"])
    listed = "its 30 methods are: " + ", ".join("'%s'" % n for n in names)
    bt.check(r.returncode == 2 and r.stdout == "" and listed in r.stderr, "all 30 methods listed: " + r.stderr)
    x = np.arange(30, dtype=np.float32)
    np.save(bt.path("x30.npy"), x)
    out = bt.path("many_out")
    r = run(["run", many, "--method", "method_29", "--input", bt.path("x30.npy"), "--output-dir", out])
    bt.check(r.returncode == 0, "the last of 30 methods runs: " + r.stderr)
    if r.returncode == 0:
        bt.check(np.array_equal(np.load(os.path.join(out, "output_0.npy")), 2 * x), "method_29 gives x + x")
    r = run(["inspect", many])
    bt.check(r.returncode == 0 and "methods: 30 " + ", ".join("'%s'" % n for n in names) in r.stdout and
             "method 'method_29': 3 values, 1 inputs" in r.stdout and "%0 float32[30] cpu" in r.stdout,
             "inspect lists 30 methods")
    r = run(["inspect", "--json", many])
    bt.check(r.returncode == 0 and [m["name"] for m in json.loads(r.stdout)["methods"]] == names,
             "inspect --json lists 30 methods")


def test_inspect(pte, good):
    r = run(["inspect", good])
    bt.check(r.returncode == 0 and "ExecuTorch bundled program" in r.stdout and
             "  method 'forward': 2 test cases\n  method 'double': 1 test cases\n" in r.stdout and
             "methods: 2 'forward', 'double'" in r.stdout, "inspect of a bundle: " + r.stdout + r.stderr)
    r = run(["inspect", pte])
    bt.check(r.returncode == 0 and "methods: 2 'forward', 'double'" in r.stdout, "inspect lists methods: " + r.stdout)
    bt.check("method 'forward': 4 values, 2 inputs" in r.stdout and "method 'double': 3 values, 1 inputs" in r.stdout,
             "inspect shows each method: " + r.stdout)
    bt.check("inputs:  %0 float32[2,3] (dynamic, upper bound) cpu %1 float32[2,3] cpu" in r.stdout,
             "forward's inputs with the upper bound: " + r.stdout)
    bt.check("inputs:  %0 float32[4] cpu" in r.stdout, "double's input: " + r.stdout)
    r = run(["inspect", "--json", pte])
    bt.check(r.returncode == 0, "inspect --json")
    if r.returncode == 0:
        methods = {m["name"]: m for m in json.loads(r.stdout)["methods"]}
        bt.check(sorted(methods) == ["double", "forward"], "both methods in JSON: %s" % sorted(methods))
        if "forward" in methods and "double" in methods:
            bt.check(methods["forward"]["input_tensors"] == [
                {"dtype": "float32", "sizes": [2, 3], "device": "cpu", "dynamic": "bound"},
                {"dtype": "float32", "sizes": [2, 3], "device": "cpu"}], "forward inputs: %s" % methods["forward"])
            bt.check(methods["double"]["input_tensors"] == [{"dtype": "float32", "sizes": [4], "device": "cpu"}],
                     "double inputs: %s" % methods["double"])


def test_gpu_program():
    """A program built for a GPU with its I/O left on the device (--io-on-device),
    bundled with outputs from the CPU executor, passes on a simulated GPU."""
    from onnx import TensorProto, helper
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["n", 8]) for n in ("x", "y", "z")]
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Relu", ["s"], ["z"])],
                              "add_relu", io[:2], io[2:])
    model = bt.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "add_relu.onnx")
    pte, bpte = bt.path("gpu.pte"), bt.path("gpu.bpte")
    r = run(["build", model, "-o", pte, "--device", "cuda:0", "--io-on-device", "--shape", "n:1:4"], env=bt.sim_env(1))
    bt.check(r.returncode == 0, "build for cuda:0: " + r.stderr)
    r = subprocess.run([FIXTURE_TOOL, "--wrap", pte, bpte], capture_output=True, text=True)
    bt.check(r.returncode == 0, "wrap: " + r.stderr)
    r = run(["test", bpte], env=bt.gpu_env())
    bt.check(r.returncode == 0 and r.stdout.endswith("1 passed, 0 failed\n"), "on the GPU: %s %s" % (r.stdout, r.stderr))
    r = run(["test", bpte])
    bt.check(r.returncode == 1 and "no GPU is present" in r.stderr and "0 passed, 1 failed" in r.stdout,
             "without a GPU: %s %s" % (r.stdout, r.stderr))
    r = run(["test", bpte, "--allow-cpu"])
    bt.check(r.returncode == 0 and "1 passed, 0 failed" in r.stdout, "--allow-cpu: " + r.stdout + r.stderr)


def test_executorch_bundle():
    if not os.path.exists(EXECUTORCH_BPTE):
        print("skipped: %s is absent" % EXECUTORCH_BPTE)
        return
    r = run(["test", EXECUTORCH_BPTE])
    bt.check(r.returncode == 0 and " 0 failed" in r.stdout, "ExecuTorch's bundle passes: %s %s" % (r.stdout, r.stderr))


if __name__ == "__main__":
    pte, good, wrong = make_fixtures()
    test_bundles(pte, good, wrong)
    test_bad_files(pte, good)
    test_methods_by_name(pte)
    test_inspect(pte, good)
    test_many_methods()
    test_gpu_program()
    test_executorch_bundle()
    bt.finish("test_bundled_cli")
