"""Where a plan's GPU time goes: the top kernels of `etrt run` under Nsight Compute.

Runs `etrt run PTE --input X --io device --iterations 1+N --profile-range` under `ncu`
collecting only each kernel's duration (one pass, so it stays quick) over the N inferences
after the first, sums the time per kernel name and prints the top kernels with their
share, their launches per inference and the total.
bench/models.py calls it for each fp16 plan with --profile; on its own:

    python3 bench/kernel_profile.py model.pte --input x.npy [--top 5] [--iterations 3]
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys


def short_name(name):
    """A kernel's name without template arguments and parameter lists."""
    name = re.sub(r"\(.*\)$", "", name.strip())
    depth, out = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    name = "".join(out).strip()
    return name.split(" ")[-1] if " " in name else name


def profile(etrt, pte, input_path, iterations=3, ncu="ncu", timeout=900):
    """Returns (per-kernel list of (name, ms per inference, launches per inference),
    total ms per inference, launches per inference), or raises RuntimeError.

    The first execute (weight uploads, the convolution algorithm searches) runs outside
    the profiled range (`etrt run --profile-range`): under the profiler every launch is
    slowed, and a search timed there would pick other algorithms than a real run."""
    cmd = [ncu, "--profile-from-start", "off", "--metrics", "gpu__time_duration.sum", "--csv",
           "--print-units", "base", etrt, "run", pte, "--io", "device", "--profile-range",
           "--iterations", str(1 + iterations)]
    cmd += ["--input", input_path] if input_path else ["--random-inputs", "1"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    lines = p.stdout.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if p.returncode != 0 or start is None:
        raise RuntimeError("ncu failed (%d):\n%s" % (p.returncode, "\n".join(lines[-30:])))
    kernels = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = short_name(row["Kernel Name"])
        ns, n = kernels.get(name, (0.0, 0))
        kernels[name] = (ns + float(row["Metric Value"].replace(",", "")), n + 1)
    rows = sorted(((name, ns / iterations / 1e6, n / iterations)
                   for name, (ns, n) in kernels.items()), key=lambda r: -r[1])
    return rows, sum(r[1] for r in rows), sum(r[2] for r in rows)


def format_top(rows, total, count, top=5):
    out = ["  %d launches, %.3f ms of kernel time per inference" % (round(count), total)]
    for name, ms, n in rows[:top]:
        out.append("  %5.1f%%  %8.3f ms  %6.1f launches  %s" %
                   (100.0 * ms / total if total else 0.0, ms, n, name))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pte")
    ap.add_argument("--input", default=None, help="the input (.npy or .pb); default: random")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    etrt = os.environ.get("ETRT_BIN", "build/bin/etrt")
    try:
        rows, total, count = profile(etrt, args.pte, args.input, args.iterations)
    except (RuntimeError, subprocess.TimeoutExpired, FileNotFoundError) as e:
        print("kernel_profile: %s" % e, file=sys.stderr)
        return 1
    print(format_top(rows, total, count, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
