"""etrt_conformance, the ONNX backend conformance runner: on a small suite made here
(a pass, wrong outputs, a refusal, a crash, a hang, NaNs, integers, several data
sets), its per-suite summary, its reasons, --verbose, --json, --min-pass and its exit
status; then a few cases of the real test data where it is installed."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.environ.get("ETRT_BUILD_DIR", os.path.join(ROOT, "build"))
RUNNER = os.path.join(BUILD_DIR, "bin", "etrt_conformance")
TESTDATA = os.environ.get("ETRT_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")
SUMMARY = re.compile(r"^(\S+): (\d+)/(\d+) passed \((\d+\.\d)%\), (\d+) failed, (\d+) not supported$", re.M)

failures = []
TMP = tempfile.mkdtemp(prefix="etrt_conformance_test_")


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def run(*args, env=None, timeout=300):
    full_env = dict(os.environ)
    full_env.pop("ETRT_CONFORMANCE_FAULT", None)
    full_env["ETRT_DEVICE"] = "cpu"
    full_env.update(env or {})
    r = subprocess.run([RUNNER, *args], capture_output=True, text=True, timeout=timeout, env=full_env)
    return r.returncode, r.stdout, r.stderr


def summaries(stdout):
    return {m[0]: tuple(int(x) for x in (m[1], m[2], m[4], m[5])) for m in SUMMARY.findall(stdout)}


def write_case(suite_dir, name, model, data_sets):
    """data_sets: a list of (inputs, outputs), each a list of (name, array or TensorProto)."""
    case = os.path.join(suite_dir, name)
    os.makedirs(case)
    onnx.save(model, os.path.join(case, "model.onnx"))
    for k, (inputs, outputs) in enumerate(data_sets):
        d = os.path.join(case, "test_data_set_%d" % k)
        os.makedirs(d)
        for prefix, tensors in (("input", inputs), ("output", outputs)):
            for i, (tname, value) in enumerate(tensors):
                t = value if isinstance(value, TensorProto) else numpy_helper.from_array(value, tname)
                with open(os.path.join(d, "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(t.SerializeToString())


def unary_model(op, dtype, shape):
    x = helper.make_tensor_value_info("x", dtype, shape)
    y = helper.make_tensor_value_info("y", dtype, shape)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op.lower(), [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def make_suite():
    data = os.path.join(TMP, "data")
    suite = os.path.join(data, "mini")
    os.makedirs(suite)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    relu = np.maximum(x, 0).astype(np.float32)
    model = unary_model("Relu", TensorProto.FLOAT, [2, 3])
    write_case(suite, "test_relu", model, [([("x", x)], [("y", relu)])])
    # within ONNX's tolerance (rtol 1e-3): still a pass
    near = (relu * np.float32(1 + 5e-4)).astype(np.float32)
    write_case(suite, "test_relu_near", model, [([("x", x)], [("y", near)])])
    # one element off by more than the tolerance, in the second data set
    wrong = relu.copy()
    wrong[1, 2] = wrong[1, 2] * np.float32(1.002) + np.float32(0.5)
    write_case(suite, "test_relu_wrong", model, [([("x", x)], [("y", relu)]), ([("x", x)], [("y", wrong)])])
    # NaN equals NaN
    s = np.array([[4.0, -1.0, 9.0], [0.0, -2.0, 1.0]], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        write_case(suite, "test_sqrt_nan", unary_model("Sqrt", TensorProto.FLOAT, [2, 3]),
                   [([("x", s)], [("y", np.sqrt(s))])])
    # integers, exactly, over two data sets
    a = helper.make_tensor_value_info("a", TensorProto.INT64, [4])
    b = helper.make_tensor_value_info("b", TensorProto.INT64, [4])
    c = helper.make_tensor_value_info("c", TensorProto.INT64, [4])
    add = helper.make_model(helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "add", [a, b], [c]),
                            opset_imports=[helper.make_opsetid("", 13)])
    sets = []
    for k in range(2):
        va = np.arange(4, dtype=np.int64) + k * 10**12
        vb = np.array([1, -1, 2, -2], dtype=np.int64)
        sets.append(([("a", va), ("b", vb)], [("c", va + vb)]))
    write_case(suite, "test_add_int64", add, sets)
    # an integer off by one: exact comparison fails it
    off = sets[0][1][0][1].copy()
    off[3] += 1
    write_case(suite, "test_add_int64_wrong", add, [(sets[0][0], [("c", off)])])
    # a string tensor: refused cleanly, not supported
    sx = helper.make_tensor_value_info("x", TensorProto.STRING, [1])
    sy = helper.make_tensor_value_info("y", TensorProto.STRING, [1])
    smodel = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "s", [sx], [sy]),
                               opset_imports=[helper.make_opsetid("", 13)])
    st = helper.make_tensor("x", TensorProto.STRING, [1], [b"a"])
    write_case(suite, "test_string", smodel, [([("x", st)], [("y", st)])])
    # crash and hang are made by the runner's fault hook for these names
    write_case(suite, "test_crash", model, [([("x", x)], [("y", relu)])])
    write_case(suite, "test_hang", model, [([("x", x)], [("y", relu)])])
    return data


def test_mini_suite(data):
    report = os.path.join(TMP, "report.json")
    code, out, err = run("--data", data, "--suite", "mini", "-j", "2", "--timeout", "20", "--verbose",
                         "--json", report, env={"ETRT_CONFORMANCE_FAULT": "crash:test_crash"})
    print(out, err)
    check(code == 0, "mini: exit status %d without --min-pass" % code)
    sums = summaries(out)
    check(sums.get("mini") == (5, 9, 3, 1), "mini: summary (passed, total, failed, not supported) %s" % (sums.get("mini"),))
    check(re.search(r"^total: 5/9 passed \(55\.6%\), 3 failed, 1 not supported on cpu in ", out, re.M) is not None,
          "mini: total line")
    lines = {m[0]: m[1] for m in re.findall(r"^mini/(\S+): (.*)$", out, re.M)}
    check(lines.get("test_relu", "").startswith("passed [cpu]"), "mini: verbose line of test_relu: %r" % lines.get("test_relu"))
    wrong = [l for l in out.splitlines() if l.startswith("mini/test_relu_wrong: FAILED")]
    check(len(wrong) >= 1 and "data set 1 output 0" in wrong[-1] and "[1,2]" in wrong[-1] and "1 of 6 elements off" in wrong[-1],
          "mini: the wrong output names the data set, the output and the worst element: %s" % wrong)
    crash = [l for l in out.splitlines() if l.startswith("mini/test_crash: FAILED")]
    check(len(crash) >= 1 and "crashed" in crash[-1], "mini: the crash is a failure naming the case: %s" % crash)
    iw = [l for l in out.splitlines() if l.startswith("mini/test_add_int64_wrong: FAILED")]
    check(len(iw) >= 1 and "got 1, expected 2" in iw[-1], "mini: integer mismatch detail: %s" % iw)
    check(re.search(r"^\s+1\s+FAILED\s+wrong output$", out, re.M) is None, "mini: reasons are counted together")
    check(re.search(r"^\s+2\s+FAILED\s+wrong output$", out, re.M) is not None, "mini: 2 wrong outputs counted")
    check(re.search(r"^\s+1\s+not supported\s+test data: ONNX element type STRING is not supported$", out, re.M)
          is not None, "mini: the string refusal's reason")
    with open(report) as f:
        r = json.load(f)
    m = r["suites"]["mini"]
    check((m["passed"], m["total"], m["failed"], m["not_supported"]) == (5, 9, 3, 1), "json: suite counts %s" % m)
    by_name = {c["name"]: c for c in r["cases"]}
    check(len(by_name) == 9, "json: 9 cases")
    check(by_name["test_relu"]["executor"] == "cpu" and by_name["test_relu"]["cpu_ops"] >= 1, "json: executor of test_relu")
    check(by_name["test_add_int64"]["data_sets"] == 2, "json: both data sets ran")
    check(by_name["test_string"]["result"] == "not supported", "json: test_string not supported")
    check(by_name["test_hang"]["result"] == "passed", "json: test_hang passes without the fault")


def test_no_flags(data):
    """Each case is built from its model alone: a Reshape whose shape is a graph input
    runs without --shape-values; an input with a symbolic size is refused (it needs
    --shape), and --flags-from-data derives the bounds from the test data."""
    suite = os.path.join(data, "flags")
    os.makedirs(suite)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "reshape",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    sets = [([("x", x), ("s", np.array(shape, dtype=np.int64))], [("y", x.reshape(shape))])
            for shape in ((3, 2), (1, 6))]
    write_case(suite, "test_reshape_input", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
               sets)
    write_case(suite, "test_relu_batch", unary_model("Relu", TensorProto.FLOAT, ["batch", 3]),
               [([("x", x)], [("y", np.maximum(x, 0))])])
    code, out, err = run("--data", data, "--suite", "flags", "--verbose", "-j", "1")
    check(code == 0, "flags: exit status %d" % code)
    check(re.search(r"^flags/test_reshape_input: passed", out, re.M) is not None,
          "flags: the Reshape built without flags: %s" % out)
    check(re.search(r"^flags/test_relu_batch: not supported .*symbolic size 'batch'", out, re.M) is not None,
          "flags: the symbolic size is refused naming the flag: %s" % out)
    code, out, err = run("--data", data, "--suite", "flags", "--filter", "relu", "-j", "1", "--flags-from-data")
    check(summaries(out).get("flags") == (1, 1, 0, 0), "flags: --flags-from-data bounds the batch: %s" % out)


def test_timeout(data):
    code, out, err = run("--data", data, "--suite", "mini", "--filter", "hang", "--timeout", "2",
                         env={"ETRT_CONFORMANCE_FAULT": "hang:test_hang"}, timeout=60)
    check(code == 0, "timeout: exit status %d" % code)
    check(summaries(out).get("mini") == (0, 1, 1, 0), "timeout: counted as a failure: %s" % out)
    check(re.search(r"^mini/test_hang: FAILED .*: timed out", out, re.M) is not None, "timeout: named: %s" % out)


def sanitized():
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            return "ETRT_SANITIZE:BOOL=ON" in f.read()
    except OSError:
        return False


def test_leak(data):
    """Under the sanitizers, memory a case leaks is reported at its exit and fails it."""
    code, out, err = run("--data", data, "--suite", "mini", "--filter", "test_relu_near",
                         env={"ETRT_CONFORMANCE_FAULT": "leak:test_relu_near"}, timeout=60)
    check(code == 0, "leak: exit status %d" % code)
    if sanitized():
        check(summaries(out).get("mini") == (0, 1, 1, 0), "leak: counted as a failure: %s" % out)
        check(re.search(r"^mini/test_relu_near: FAILED \[cpu\] .*: at exit: \S+Sanitizer: memory leak", out, re.M)
              is not None, "leak: named, with the executor the case reported: %s" % out)
    else:
        check(summaries(out).get("mini") == (1, 1, 0, 0), "leak: passes without a leak checker: %s" % out)


def test_min_pass(data):
    args = ("--data", data, "--suite", "mini", "--filter", "relu", "-j", "1")
    code, out, _ = run(*args, "--min-pass", "mini:66")
    check(code == 0, "min-pass 66%% of 2/3: exit %d" % code)
    code, out, _ = run(*args, "--min-pass", "mini:67")
    check(code == 1, "min-pass 67%% of 2/3: exit %d" % code)
    check("mini: 66.7% passed, below the required 67%" in out, "min-pass: says which suite: %s" % out)
    code, out, _ = run(*args, "--min-pass", "other:50")
    check(code == 0 and "not checked" in out, "min-pass of a suite that did not run: %d %s" % (code, out))


def test_usage(data):
    for args in (["--min-pass", "node"], ["--min-pass", "node:abc"], ["--bogus"], ["-j", "0"],
                 ["--device", "tpu"], ["--data", os.path.join(TMP, "missing")],
                 ["--data", data, "--suite", "missing"]):
        code, out, err = run(*args)
        check(code == 2 and err.strip() != "", "usage %s: exit %d, message %r" % (args, code, err))
    code, out, _ = run("--help")
    check(code == 0 and "--min-pass" in out, "--help")


def test_real_data():
    if not os.path.isdir(os.path.join(TESTDATA, "node")):
        print("skipped: no ONNX backend test data at %s (Debian package libonnx-testdata)" % TESTDATA)
        return
    code, out, err = run("--data", TESTDATA, "--suite", "node", "--suite", "pytorch-operator", "--filter",
                         "test_relu", "-j", "2", "--verbose", "--min-pass", "node:100")
    print(out, err)
    sums = summaries(out)
    check(code == 0, "real data: exit %d" % code)
    check("node" in sums and sums["node"][0] == sums["node"][1] >= 1, "real data: node relu cases pass: %s" % sums)
    check(re.search(r"^node/test_relu: passed \[cpu\]", out, re.M) is not None, "real data: verbose line of test_relu")


def main():
    if not os.path.exists(RUNNER):
        print("FAIL: no runner at %s" % RUNNER)
        sys.exit(1)
    data = make_suite()
    test_mini_suite(data)
    test_no_flags(data)
    test_timeout(data)
    test_leak(data)
    test_min_pass(data)
    test_usage(data)
    test_real_data()
    shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("test_conformance_runner: %d failure(s)" % len(failures))
        sys.exit(1)
    print("test_conformance_runner: ok")


if __name__ == "__main__":
    main()
