"""The ExecuTorch corpus (tests/data/executorch, made by tools/executorch/export_corpus.py
with the real exporter): every program runs through `etrt run` and matches the outputs
ExecuTorch's own runtime computed, floats within 1e-5 of the largest reference value,
integers and bools exactly.

Programs etrt cannot run yet are listed in KNOWN_UNSUPPORTED with the operator that stops
them: such a program must be refused naming that operator, and the test fails when it
runs instead, so the list shrinks as operators land. A wrong number
fails whatever the list says.

ETRT_EXECUTORCH_CORPUS names another corpus folder (make test-executorch re-exports into
one); there every program must be refused as listed or pass."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ETRT = os.environ.get("ETRT_BIN", os.path.join(ROOT, "build", "bin", "etrt"))
FIXTURES = os.environ.get("ETRT_FIXTURES_DIR", os.path.join(ROOT, "tests", "data"))
CORPUS = os.environ.get("ETRT_EXECUTORCH_CORPUS", os.path.join(FIXTURES, "executorch"))
RELATIVE = 1e-5
# Programs that compute in float16 / bfloat16 (manifest: "precision": "reduced").
RELATIVE_REDUCED = 1e-2

# program -> the operator etrt refuses it for. etrt checks every method's operator table
# when it loads a program and names the first operator it lacks (in table order), so this
# is the first missing entry of the program's operator table: when an operator lands, the
# program moves on to the next one it lacks (or passes) and this list must follow.
KNOWN_UNSUPPORTED = {}
MISSING = re.compile(r"operator (\S+) is not available")


def named_operator(program, stderr):
    """The operator a refusal names as missing: etrt's "operator X is not available", else
    the one operator of the program that a message saying it lacks a kernel mentions (so a
    reworded message still counts, and a kernel refusing its arguments does not)."""
    m = MISSING.search(stderr)
    if m:
        return m.group(1)
    if not re.search(r"not available|no kernel|unknown operator|not registered", stderr):
        return None
    ops = {op for method in program["methods"].values() for op in method["operators"]}
    mentioned = [op for op in ops if re.search(re.escape(op) + r"(?![\w.])", stderr)]
    return mentioned[0] if len(mentioned) == 1 else None

failures = []
TMP = tempfile.mkdtemp(prefix="etrt_corpus_test_")


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def max_error(got, want, relative=RELATIVE):
    """The largest difference, and whether it is within the corpus's rule."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf"), False
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        diff = int(np.count_nonzero(got != want))
        return float(diff), diff == 0
    if want.size == 0:
        return 0.0, True
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    scale = float(np.max(np.abs(want.astype(np.float64))))
    return diff, bool(np.all(np.isfinite(got))) and diff <= relative * max(scale, np.finfo(np.float32).tiny)


def run_case(program, case):
    out = os.path.join(TMP, program["name"], case["case"])
    args = [ETRT, "run", os.path.join(CORPUS, program["file"]), "--method", case["method"], "--output-dir", out]
    if program.get("data"):
        args += ["--data", os.path.join(CORPUS, program["data"])]
    for entry in case["inputs"]:
        args += ["--input", os.path.join(CORPUS, entry["file"])]
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "cpu"
    return subprocess.run(args, capture_output=True, text=True, env=env), out


def check_program(program):
    """Returns (status, max error) for the table."""
    name = program["name"]
    known = KNOWN_UNSUPPORTED.get(name)
    worst = 0.0
    for case in program["cases"]:
        label = "%s (%s)" % (name, case["case"])
        r, out = run_case(program, case)
        if r.returncode != 0:
            missing = named_operator(program, r.stderr)
            if known is None:
                check(False, "%s refused: %s" % (label, r.stderr.strip()))
                return "FAILED", None
            if missing and missing != known:
                check(False, "%s is now refused for %s, not %s: update KNOWN_UNSUPPORTED" %
                      (label, missing, known))
                return "FAILED", None
            check(missing == known,
                  "%s: refused for another reason than a missing %s: %s" % (label, known, r.stderr.strip()))
            return ("unsupported: " + known) if missing else "FAILED", None
        for i, entry in enumerate(case["outputs"]):
            want = np.load(os.path.join(CORPUS, entry["file"]))
            path = os.path.join(out, "output_%d.npy" % i)
            if not check(os.path.exists(path), "%s: output %d not written" % (label, i)):
                return "FAILED", None
            got = np.load(path)
            err, ok = max_error(got, want, RELATIVE_REDUCED if program.get("precision") == "reduced" else RELATIVE)
            worst = max(worst, err)
            check(ok, "%s output %d: %s %s vs reference %s %s, max error %g" %
                  (label, i, got.dtype, got.shape, want.dtype, want.shape, err))
        check(not os.path.exists(os.path.join(out, "output_%d.npy" % len(case["outputs"]))),
              "%s: more outputs than ExecuTorch's" % label)
    if known is not None:
        check(False, "%s now runs: remove it from KNOWN_UNSUPPORTED" % name)
    return "ok" if not [f for f in failures if f.startswith(name)] else "FAILED", worst


def test_inspect_agrees(program):
    """`etrt inspect --json` reads each method as ExecuTorch's own program reading did when
    the corpus was exported: operator table, instruction count, values, I/O indices."""
    r = subprocess.run([ETRT, "inspect", "--json", os.path.join(CORPUS, program["file"])],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, "%s: etrt inspect refuses it: %s" % (program["name"], r.stderr.strip())):
        return
    seen = {m["name"]: m for m in json.loads(r.stdout)["methods"]}
    check(sorted(seen) == sorted(program["methods"]), "%s: methods %s vs ExecuTorch's %s" %
          (program["name"], sorted(seen), sorted(program["methods"])))
    for name, want in program["methods"].items():
        got = seen.get(name)
        if got is None:
            continue
        summary = {"operators": got["operators"], "instructions": len(got["instructions"]),
                   "inputs": got["inputs"], "outputs": got["outputs"], "num_values": got["num_values"]}
        for key, value in summary.items():
            check(value == want[key], "%s.%s: etrt inspect says %s = %s, ExecuTorch %s" %
                  (program["name"], name, key, value, want[key]))


def test_corpus():
    with open(os.path.join(CORPUS, "manifest.json")) as f:
        manifest = json.load(f)
    programs = manifest["programs"]
    check(len(programs) >= 16, "the corpus lists %d programs" % len(programs))
    rows = []
    for program in programs:
        test_inspect_agrees(program)
        status, err = check_program(program)
        rows.append((program["name"], status, "-" if err is None else "%.3g" % err))
    for name in KNOWN_UNSUPPORTED:
        check(any(p["name"] == name for p in programs), "%s is listed but not in the corpus" % name)
    width = max(len(r[0]) for r in rows)
    print("%-*s  %-40s  %s" % (width, "program", "status", "max error"))
    for row in rows:
        print("%-*s  %-40s  %s" % (width, row[0], row[1], row[2]))


def test_refusals():
    """The exporter's own refusal cases: a .ptd program without its data, a batch beyond
    the exported Dim's max, a method the program does not have."""
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "cpu"
    ptd = os.path.join(CORPUS, "mlp_ptd.pte")
    r = subprocess.run([ETRT, "run", ptd, "--input", os.path.join(CORPUS, "mlp_ptd", "input_0.npy")],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 2 and "--data" in r.stderr and "w1" in r.stderr,
          "mlp_ptd without its .ptd is refused naming the tensor and --data: %r" % r.stderr)
    big = os.path.join(TMP, "batch9.npy")
    np.save(big, np.zeros((9, 8), np.float32))
    r = subprocess.run([ETRT, "run", os.path.join(CORPUS, "mlp_dynamic_batch.pte"), "--input", big],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 2 and "size 9" in r.stderr and "at most 8" in r.stderr,
          "batch 9 beyond the exported max of 8 is refused: %r" % r.stderr)
    r = subprocess.run([ETRT, "run", os.path.join(CORPUS, "two_methods.pte"), "--method", "decode",
                        "--random-inputs", "1"], capture_output=True, text=True, env=env)
    check(r.returncode == 2 and "'encode', 'forward'" in r.stderr,
          "an unknown method is refused listing the program's methods: %r" % r.stderr)


def test_max_error_can_fail():
    """The comparison itself: a float just outside the rule, an int off by one, a bool flipped."""
    want = np.array([100.0, -1.0], np.float32)
    check(max_error(want + np.float32(0.0005), want)[1], "within 1e-5 of the largest value passes")
    check(not max_error(want + np.float32(0.002), want)[1], "beyond 1e-5 of the largest value fails")
    check(not max_error(np.array([1, 3]), np.array([1, 2]))[1], "an integer off by one fails")
    check(not max_error(np.array([True]), np.array([False]))[1], "a flipped bool fails")
    check(not max_error(np.array([1.0], np.float64), np.array([1.0], np.float32))[1], "a dtype mismatch fails")
    check(not max_error(np.array([np.nan], np.float32), np.array([0.0], np.float32))[1], "NaN fails")


def test_mutable_buffer_persists():
    """The buffer mutable_buffer writes back with aten::copy_ keeps its value from one
    execute to the next: the second of two executes adds the input again."""
    pte = os.path.join(CORPUS, "mutable_buffer.pte")
    if not os.path.exists(pte):
        return
    x = np.load(os.path.join(CORPUS, "mutable_buffer", "input_0.npy"))
    out = os.path.join(TMP, "mutable_buffer_twice")
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "cpu"
    r = subprocess.run([ETRT, "run", pte, "--input", os.path.join(CORPUS, "mutable_buffer",
                                                                  "input_0.npy"),
                        "--iterations", "2", "--output-dir", out],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, "mutable_buffer runs twice: %s" % r.stderr)
    if r.returncode != 0:
        return
    acc = x.copy()
    acc[0, 1] = 5
    acc = acc + x
    acc[0, 1] = 5
    got = np.load(os.path.join(out, "output_0.npy"))
    check(np.allclose(got, 2 * acc, rtol=1e-6, atol=1e-6),
          "mutable_buffer's second execute sees the first's buffer: %s, want %s" % (got, 2 * acc))


if __name__ == "__main__":
    test_max_error_can_fail()
    test_refusals()
    test_mutable_buffer_persists()
    test_corpus()
    shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("test_executorch_corpus: %d failure(s)" % len(failures))
        sys.exit(1)
    print("test_executorch_corpus: ok")
