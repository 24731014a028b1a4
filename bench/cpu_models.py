"""CPU speed and footprint against onnxruntime on real models (make bench-cpu).

Exports torchvision ResNet-50, MobileNet v2/v3, EfficientNet-B0 and a BERT-base-like
encoder (random weights) to ONNX under build-bench/ (cached), takes the trained models
that PyPI packages ship (rapidocr-onnxruntime's OCR detector, recogniser and classifier,
NudeNet's detector: pip download, no dependencies), builds each with
`etrt build --device cpu`, then in one run times `etrt run --iterations N` (its median)
and onnxruntime's CPU provider on the same input, at one thread and at the default
thread count of each, with each of etrt's CPU kernel paths (--kernels: the build's
default, oneDNN where built with it, and etrt's own through ETRT_CPU_KERNELS=etrt, measured
back to back in the same run), and prints medians, ratios, their geometric mean, the largest
output difference and the peak resident memory of each `etrt run` against the goal
(.pte size + planned activations, the program's and its engines' intermediates, + 32 MiB).

Needs torch, torchvision, onnx and onnxruntime (BENCH_PYTHON in the Makefile)."""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export_vision(name, path):
    import torch
    import torchvision

    ctor = {"resnet50": torchvision.models.resnet50, "mobilenet_v2": torchvision.models.mobilenet_v2,
            "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
            "efficientnet_b0": torchvision.models.efficientnet_b0}[name]
    torch.manual_seed(0)
    model = ctor(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=17,
                      dynamo=False)


def export_bert(path, layers=12, hidden=768, heads=12, ff=3072, seq=128, vocab=30522):
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.out = nn.Linear(hidden, hidden)
            self.ln1 = nn.LayerNorm(hidden)
            self.ff1 = nn.Linear(hidden, ff)
            self.ff2 = nn.Linear(ff, hidden)
            self.ln2 = nn.LayerNorm(hidden)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(hidden, dim=-1)
            q = q.reshape(b, s, heads, hidden // heads).transpose(1, 2)
            k = k.reshape(b, s, heads, hidden // heads).transpose(1, 2)
            v = v.reshape(b, s, heads, hidden // heads).transpose(1, 2)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hidden // heads), dim=-1)
            ctx = (att @ v).transpose(1, 2).reshape(b, s, hidden)
            x = self.ln1(x + self.out(ctx))
            return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
            self.ln = nn.LayerNorm(hidden)
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])

        def forward(self, ids):
            x = self.ln(self.tok(ids) + self.pos)
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    model = Encoder().eval()
    ids = torch.randint(0, vocab, (1, seq))
    torch.onnx.export(model, (ids,), path, input_names=["ids"], output_names=["y"], opset_version=17,
                      dynamo=False)


MODELS = {
    "resnet50": ("x", (1, 3, 224, 224), np.float32),
    "mobilenet_v2": ("x", (1, 3, 224, 224), np.float32),
    "mobilenet_v3_large": ("x", (1, 3, 224, 224), np.float32),
    "efficientnet_b0": ("x", (1, 3, 224, 224), np.float32),
    "bert_base": ("ids", (1, 128), np.int64),
    # Models shipped inside PyPI packages (trained weights), at the input sizes their
    # packages feed them: the OCR detector, recogniser and direction classifier of
    # rapidocr-onnxruntime, and NudeNet's YOLOv8n detector.
    "ocr_det": ("x", (1, 3, 640, 640), np.float32),
    "ocr_rec": ("x", (1, 3, 48, 320), np.float32),
    "ocr_cls": ("x", (1, 3, 48, 192), np.float32),
    "nudenet": ("images", (1, 3, 320, 320), np.float32),
}

# Packaged models: (PyPI package==version, the file inside its wheel).
PACKAGED = {
    "ocr_det": ("rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"),
    "ocr_rec": ("rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"),
    "ocr_cls": ("rapidocr-onnxruntime==1.4.4",
                "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
    "nudenet": ("nudenet==3.4.2", "nudenet/320n.onnx"),
}


def fetch_packaged(name, path):
    """Copies a model out of its package's wheel (pip download, no dependencies)."""
    import glob
    import tempfile
    import zipfile

    requirement, member = PACKAGED[name]
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder, requirement],
                       check=True)
        with zipfile.ZipFile(glob.glob(os.path.join(folder, "*.whl"))[0]) as wheel, open(path, "wb") as out:
            out.write(wheel.read(member))


def prepare(name, cache, etrt):
    onnx_path = os.path.join(cache, name + ".onnx")
    pte_path = os.path.join(cache, name + ".pte")
    if not os.path.exists(onnx_path):
        print("exporting", name, file=sys.stderr, flush=True)
        tmp = onnx_path + ".tmp"
        if name == "bert_base":
            export_bert(tmp)
        elif name in PACKAGED:
            fetch_packaged(name, tmp)
        else:
            export_vision(name, tmp)
        os.replace(tmp, onnx_path)
    input_name, shape, dtype = MODELS[name]
    if not os.path.exists(pte_path) or os.path.getmtime(pte_path) < os.path.getmtime(etrt):
        # The packaged models leave batch and image sizes open: fixed here to the input's.
        shape_flags = ["--shape", "%s:%s" % (input_name, "x".join(str(d) for d in shape))] if name in PACKAGED else []
        r = subprocess.run([etrt, "build", onnx_path, "-o", pte_path, "--device", "cpu", "--quiet"] + shape_flags,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("etrt build %s: %s" % (name, r.stderr.strip()))
    rng = np.random.default_rng(1)
    x = rng.integers(0, 30522, shape).astype(dtype) if dtype == np.int64 else rng.standard_normal(shape).astype(dtype)
    x_path = os.path.join(cache, name + ".input.npy")
    np.save(x_path, x)
    return onnx_path, pte_path, input_name, x, x_path


UNITS = {"ns": 1e-6, "\u00b5s": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}


def etrt_env(kernels):
    env = dict(os.environ, ETRT_DEVICE="cpu")
    env.pop("ETRT_CPU_KERNELS", None)
    if kernels != "default":
        env["ETRT_CPU_KERNELS"] = kernels
    return env


def run_etrt(etrt, pte, x_path, threads, iterations, out_dir, kernels):
    args = [etrt, "run", pte, "--input", x_path, "--iterations", str(iterations), "--output-dir", out_dir]
    if threads:
        args += ["--threads", str(threads)]
    proc = subprocess.run(args, capture_output=True, env=etrt_env(kernels))
    out, err = proc.stdout, proc.stderr
    if proc.returncode != 0:
        raise RuntimeError("etrt run %s: %s" % (pte, err.decode().strip()))
    m = re.search(r"time per iteration: (\S+) (\S+) \(median", out.decode())
    if m is None:
        raise RuntimeError("etrt run printed no time: " + out.decode())
    return float(m.group(1)) * UNITS[m.group(2)], np.load(os.path.join(out_dir, "output_0.npy"))


def peak_rss_mib(etrt, pte, x_path, threads, kernels):
    """Peak resident memory of one `etrt run`, measured by GNU time: a child of this
    (large) Python process would inherit its high-water mark across exec."""
    args = [etrt, "run", pte, "--input", x_path, "--iterations", "1"] + (["--threads", str(threads)] if threads else [])
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + args, capture_output=True, text=True,
                       env=etrt_env(kernels))
    return int(r.stderr.strip().splitlines()[-1]) / 1024.0


def planned_bytes(etrt, pte):
    """The planned activations, from `etrt inspect --json`: the program's planned
    (non-constant) buffers and each engine's intermediates and workspace. Sized with
    etrt's kernels: oneDNN's per-node workspaces (blocked copies, scratchpads) share the
    engine's arena where they fit and would otherwise raise it, so they count against
    the 32 MiB, not towards the goal."""
    import json

    r = subprocess.run([etrt, "inspect", "--json", pte], capture_output=True, text=True,
                       env=etrt_env("etrt"))
    try:
        methods = json.loads(r.stdout)["methods"]
    except (ValueError, KeyError):
        return 0
    total = 0
    for m in methods:
        total += sum(m.get("non_const_buffer_sizes", []))
        for d in m.get("delegates", []):
            peak = d.get("peak_device_memory", {})
            total += peak.get("intermediates", 0) + peak.get("workspace", 0)
    return total


def run_ort(onnx_path, input_name, x, threads, iterations):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0: onnxruntime's default
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    feed = {input_name: x}
    y = session.run(None, feed)[0]
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etrt", default=os.path.join(ROOT, "build", "bin", "etrt"))
    parser.add_argument("--cache", default=os.path.join(ROOT, "build-bench"))
    parser.add_argument("--iterations", type=int, default=5, help="timed runs per round (median)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds alternating onnxruntime and etrt; each figure is the median of the "
                             "rounds' medians")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--threads", default="1,0", help="thread counts; 0 is each runtime's default")
    parser.add_argument("--kernels", default="default,etrt",
                        help="etrt's CPU kernel paths: default (the build's), etrt, onednn")
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    etrt = os.path.abspath(args.etrt)
    print("machine: %d cores usable (sched_getaffinity); onnxruntime %s" % (len(os.sched_getaffinity(0)),
                                                                           __import__("onnxruntime").__version__))
    header = "%-20s %7s %8s %11s %11s %7s %10s %9s %9s %s" % (
        "model", "threads", "kernels", "etrt ms", "ort ms", "ratio", "max diff", "rss MiB", "goal MiB", "")
    print(header)
    ratios = {}
    for name in args.models.split(","):
        try:
            onnx_path, pte, input_name, x, x_path = prepare(name, args.cache, etrt)
        except Exception as e:  # a model that does not export or build is reported, not fatal
            print("%-20s %s" % (name, str(e).splitlines()[0][:150]))
            continue
        goal = os.path.getsize(pte) / 2**20 + planned_bytes(etrt, pte) / 2**20 + 32
        for threads in [int(t) for t in args.threads.split(",")]:
            out_dir = os.path.join(args.cache, "out_%s_%d" % (name, threads))
            os.makedirs(out_dir, exist_ok=True)
            # Rounds alternate the runtimes, so that a machine that slows down for a while
            # slows both: each figure is the median of the rounds' medians.
            kernel_list = args.kernels.split(",")
            ort_times, etrt_times, failed = [], {k: [] for k in kernel_list}, {}
            for _ in range(args.rounds):
                ort_ms, y_ort = run_ort(onnx_path, input_name, x, threads, args.iterations)
                ort_times.append(ort_ms)
                for kernels in kernel_list:
                    if kernels in failed:
                        continue
                    try:
                        etrt_ms, y_etrt = run_etrt(etrt, pte, x_path, threads, args.iterations, out_dir,
                                                   kernels)
                    except RuntimeError as e:
                        failed[kernels] = str(e).splitlines()[0][:150]
                        continue
                    etrt_times[kernels].append((etrt_ms, y_etrt))
            ort_ms = statistics.median(ort_times)
            for kernels in kernel_list:
                if kernels in failed:
                    print("%-20s %7s %8s %s" % (name, threads or "default", kernels, failed[kernels]))
                    continue
                etrt_ms = statistics.median(t for t, _ in etrt_times[kernels])
                y_etrt = etrt_times[kernels][-1][1]
                rss = peak_rss_mib(etrt, pte, x_path, threads, kernels)
                diff = (float(np.max(np.abs(y_etrt.astype(np.float64) - y_ort))) if y_etrt.shape == y_ort.shape
                        else float("nan"))
                ratio = etrt_ms / ort_ms
                ratios.setdefault((kernels, threads), []).append(ratio)
                print("%-20s %7s %8s %11.2f %11.2f %7.2f %10.2e %9.1f %9.1f %s" % (
                    name, threads or "default", kernels, etrt_ms, ort_ms, ratio, diff, rss, goal,
                    "" if rss <= goal else "over"), flush=True)
    for (kernels, threads), values in ratios.items():
        geo = math.exp(sum(math.log(v) for v in values) / len(values))
        print("geometric mean etrt/ort, %s kernels, at %s threads: %.2f (%d models, worst %.2f)" % (
            kernels, threads or "default", geo, len(values), max(values)))


if __name__ == "__main__":
    main()
