"""etrt against ExecuTorch's portable runtime on the corpus, in one run (make bench-executorch).

For each program of the manifest (its first case): the median `etrt run --iterations N`
prints, and the median of N timed `method.execute` calls in `executorch.runtime` after a
warm-up, plus the largest difference between the two runtimes' outputs of a first execute
(programs with mutable buffers move on with every execute). Prints the table
program | operators | etrt ms | ExecuTorch ms | ratio | max error. Run inside the
environment of `make venv-executorch`.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from executorch.runtime import Runtime

UNITS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
MISSING = re.compile(r"operator (\S+) is not available")
TIME = re.compile(r"time per iteration: ([0-9.]+) (ns|µs|us|ms|s) \(median of (\d+)\)")


def etrt_median(etrt, corpus, program, case, iterations, out):
    args = [etrt, "run", os.path.join(corpus, program["file"]), "--method", case["method"],
            "--iterations", str(iterations), "--output-dir", out]
    if program.get("data"):
        args += ["--data", os.path.join(corpus, program["data"])]
    for entry in case["inputs"]:
        args += ["--input", os.path.join(corpus, entry["file"])]
    env = dict(os.environ)
    env["ETRT_DEVICE"] = "cpu"
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        missing = MISSING.search(r.stderr)
        if missing:
            return None, "refused: %s missing" % missing.group(1)
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit %d" % r.returncode
    m = TIME.search(r.stdout)
    if not m:
        return None, "no time in: " + r.stdout.strip()
    return float(m.group(1)) * UNITS[m.group(2)], None


def executorch_median(corpus, program, case, iterations):
    data = os.path.join(corpus, program["data"]) if program.get("data") else None
    method = Runtime.get().load_program(os.path.join(corpus, program["file"]), data_path=data).load_method(
        case["method"])
    inputs = [torch.from_numpy(np.load(os.path.join(corpus, e["file"]))) for e in case["inputs"]]
    # A channels-last input is handed over in that memory format (ExecuTorch copies bytes).
    inputs = [t.contiguous(memory_format=torch.channels_last) if e.get("dim_order") == [0, 2, 3, 1] else t
              for t, e in zip(inputs, case["inputs"])]
    # The reference is the first execute's: a program with mutable buffers moves on with
    # every execute, so later ones differ (in both runtimes alike).
    outputs = None
    for _ in range(max(3, iterations // 10)):
        result = method.execute(inputs)
        if outputs is None:  # copied: outputs may live in the method's planned memory
            outputs = [o.detach().clone() for o in result]
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        method.execute(inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), [o.detach().numpy() for o in outputs]


def max_error(out, reference):
    worst = 0.0
    for i, want in enumerate(reference):
        got = np.load(os.path.join(out, "output_%d.npy" % i))
        if got.shape != want.shape:
            return float("inf")
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0)))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--etrt", required=True, help="the etrt binary (a Release build)")
    parser.add_argument("--corpus", required=True, help="folder holding manifest.json")
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    with open(os.path.join(args.corpus, "manifest.json")) as f:
        manifest = json.load(f)
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="etrt_bench_") as tmp:
        for program in manifest["programs"]:
            case = program["cases"][0]
            out = os.path.join(tmp, program["name"])
            et_ms, reference = executorch_median(args.corpus, program, case, args.iterations)
            ours, why = etrt_median(args.etrt, args.corpus, program, case, args.iterations, out)
            if ours is not None:
                # The error of a single execute, as the reference is the first one.
                _, why = etrt_median(args.etrt, args.corpus, program, case, 1, out)
                ours = None if why else ours
            if ours is None:
                rows.append((program["name"], len(program["operators"]), "-", "%.4g" % et_ms, "-", why))
            else:
                rows.append((program["name"], len(program["operators"]), "%.4g" % ours, "%.4g" % et_ms,
                             "%.2f" % (ours / et_ms), "%.3g" % max_error(out, reference)))
            print(".", end="", flush=True, file=sys.stderr)
    print(file=sys.stderr)
    header = ("program", "operators", "etrt ms", "ExecuTorch ms", "ratio", "max error")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print("(median of %d iterations each; ratio = etrt / ExecuTorch, below 1 is faster; torch on one thread; ExecuTorch times include the Python binding of method.execute)"
          % args.iterations)


if __name__ == "__main__":
    sys.exit(main())
