"""Shared by the tests/python/test_build_*.py tests: running `etrt build`, `etrt
inspect --json` and `etrt run`, and collecting failures. Not a test itself."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ETRT = os.environ.get("ETRT_BIN", os.path.join(ROOT, "build", "bin", "etrt"))
BUILD_DIR = os.environ.get("ETRT_BUILD_DIR", os.path.dirname(os.path.dirname(ETRT)))

# Tolerances of each --precision against a float64-free NumPy float32 reference
# (also stated in `etrt build --help` and the README): absolute + relative.
TOLERANCE = {"fp32": (1e-4, 1e-4), "tf32": (1e-2, 1e-2), "fp16": (2e-2, 2e-2), "bf16": (1e-1, 5e-2)}

failures = []
TMP = tempfile.mkdtemp(prefix="etrt_build_test_")


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def finish(name):
    shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("%s: %d failure(s)" % (name, len(failures)))
        sys.exit(1)
    print("%s: ok" % name)
    sys.exit(0)


def path(name):
    return os.path.join(TMP, name)


def sim_env(count=4):
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "sim:%d" % count
    return env


def gpu_env():
    """Where a cuda:0 program runs: the real GPU under `make test-gpu`
    (ETRT_TEST_REAL_GPU=1), else one simulated GPU."""
    if os.environ.get("ETRT_TEST_REAL_GPU") == "1":
        env = dict(os.environ)
        env.pop("ETRT_DEVICE", None)
        return env
    return sim_env(1)


def cpu_env():
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "cpu"
    return env


def save_model(model, name):
    onnx.checker.check_model(model)
    target = path(name)
    onnx.save(model, target)
    return target


def etrt(args, env=None):
    return subprocess.run([ETRT] + list(args), capture_output=True, text=True, env=env)


def build(model_path, out_name, *flags, env=None, expect=0):
    """Runs `etrt build`; returns (pte path, stderr)."""
    out = path(out_name)
    result = etrt(["build", model_path, "-o", out] + list(flags), env=env)
    check(result.returncode == expect,
          "etrt build %s %s: exit %d, expected %d\n%s" % (os.path.basename(model_path), " ".join(flags),
                                                          result.returncode, expect, result.stderr))
    return out, result.stderr


def inspect(pte):
    result = etrt(["inspect", "--json", pte])
    if not check(result.returncode == 0, "etrt inspect --json %s: %s" % (pte, result.stderr)):
        return None
    return json.loads(result.stdout)


def method(pte):
    info = inspect(pte)
    return None if info is None else info["methods"][0]


_run_available = None


def run_available():
    """`etrt run` is written separately; the numeric checks are skipped (with a
    message) where it does not exist yet."""
    global _run_available
    if _run_available is None:
        result = etrt(["run", "--help"])
        _run_available = "unknown command" not in result.stderr and "not built" not in result.stderr
        if not _run_available:
            print("SKIP: `etrt run` is not available in this build: numeric checks skipped")
    return _run_available


def run(pte, inputs, env=None, tag="run"):
    """Runs the program on inputs (NumPy arrays); returns the outputs, or None when
    `etrt run` is unavailable or failed (a failure is recorded)."""
    if not run_available():
        return None
    out_dir = path("%s_out" % tag)
    os.makedirs(out_dir, exist_ok=True)
    args = ["run", pte, "--output-dir", out_dir]
    for i, array in enumerate(inputs):
        name = path("%s_input_%d.npy" % (tag, i))
        np.save(name, array)
        args += ["--input", name]
    result = etrt(args, env=env)
    if not check(result.returncode == 0, "etrt run %s (%s): exit %d\n%s%s" % (
            os.path.basename(pte), tag, result.returncode, result.stdout, result.stderr)):
        return None
    outputs = []
    while os.path.exists(os.path.join(out_dir, "output_%d.npy" % len(outputs))):
        outputs.append(np.load(os.path.join(out_dir, "output_%d.npy" % len(outputs))))
    return outputs


def compare(got, want, precision, what):
    if got is None:
        return
    atol, rtol = TOLERANCE[precision]
    ok = check(got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape))
    if ok:
        err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
        check(np.allclose(got, want, atol=atol, rtol=rtol),
              "%s: largest difference %.3g over tolerance (atol %g, rtol %g)" % (what, err, atol, rtol))
        print("  %s: max |diff| %.3g (%s)" % (what, err, precision))


def instruction_summary(m):
    """Instructions as short strings: 'h2d', 'd2h', 'delegate N'."""
    out = []
    for ins in m["instructions"]:
        if ins["kind"] == "delegate":
            out.append("delegate %d" % ins["delegate"])
        elif ins["kind"] == "kernel":
            op = ins["op"]
            out.append("h2d" if "_h2d_copy" in op else "d2h" if "_d2h_copy" in op else op)
        else:
            out.append(ins["kind"])
    return out


def tensor_devices(m):
    return {t["index"]: t["device"] for t in m["tensors"]}


def labels(m):
    return [d["compile_specs"].get("target_device") for d in m["delegates"]]
