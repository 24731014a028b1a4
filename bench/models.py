"""The model benchmark (`make bench-models`, on a machine with an NVIDIA GPU and PyTorch).

Exports ResNet-50 and BERT-base (random weights; BatchNorm running statistics that are
not identity, as a trained checkpoint has) to ONNX, builds each with etrt for cuda:0 in
fp32, fp16 and bf16 with I/O on the device, and in one run times:

  etrt     `etrt run --io device --iterations N` (device-resident I/O) and
           `--io pinned` (pinned host I/O, staged by the runtime);
  eager    PyTorch eager, float16 (channels-last for ResNet, cudnn.benchmark);
  compile  torch.compile float16, mode "reduce-overhead" (and "max-autotune" with
           --max-autotune; the faster counts).

Every time is the median of N runs (default 200) after warm-up. It also reports each
plan's peak device memory (etrt inspect: weights + intermediates + workspace) against
PyTorch's peak allocation for the same model and batch, and each etrt output's error
against the float32 PyTorch output (largest absolute difference over the largest
absolute reference value). The last thing printed is one table with etrt/compile ratios.

    make bench-models [BENCH_MODELS_FLAGS="--batches 1,32 --no-compile ..."]
    ETRT_BIN=build/bin/etrt python3 bench/models.py --help
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

import kernel_profile  # beside this script, which Python puts first on the path

SEQ = 128


def log(*a):
    print(*a, flush=True)


def median_ms(fn, runs, warmup=20):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def resnet50():
    import torch
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None)
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 1.5 + 0.5)
            mod.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            mod.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return m.eval()


def bert_base():
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, attn_implementation="eager")

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertModel(cfg, add_pooling_layer=False)

        def forward(self, input_ids):
            return self.bert(input_ids=input_ids).last_hidden_state

    return Bert().eval()


def make_input(model_name, batch, seed):
    rng = np.random.default_rng(seed)
    if model_name == "resnet50":
        return rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)
    return rng.integers(0, 30522, size=(batch, SEQ), dtype=np.int64)


def export(model, model_name, example, path):
    import torch
    kwargs = dict(input_names=["x"], output_names=["y"], opset_version=17)
    try:
        torch.onnx.export(model, (example,), path, dynamo=False, **kwargs)
    except Exception as e:  # the TorchScript exporter may be gone: the dynamo one then
        log("  %s: TorchScript export failed (%s); trying dynamo=True" % (model_name, e))
        torch.onnx.export(model, (example,), path, dynamo=True, external_data=False, **kwargs)


def run(cmd, timeout, env=None):
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, time.time() - t


def parse_ms(text):
    m = re.search(r"time per iteration: ([0-9.]+) ?(ns|us|µs|ms|s)\b", text)
    if not m:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return float(m.group(1)) * scale


def etrt_peak(etrt, pte):
    code, out, _ = run([etrt, "inspect", "--json", pte], 120)
    if code != 0:
        return None
    total = 0
    for method in json.loads(out).get("methods", []):
        for d in method.get("delegates", []):
            total += (d.get("peak_device_memory") or {}).get("total", 0)
    return total or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--batches", default="1,32,128", help="ResNet batches; BERT takes those <= 32")
    ap.add_argument("--precisions", default="fp32,fp16,bf16")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--max-autotune", action="store_true", help="also try mode='max-autotune'")
    ap.add_argument("--no-pinned", action="store_true", help="skip the pinned host I/O runs")
    ap.add_argument("--profile", action="store_true",
                    help="also print each fp16 plan's top kernels under ncu (bench/kernel_profile.py)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()

    import torch
    torch.backends.cudnn.benchmark = True
    etrt = os.environ.get("ETRT_BIN", "build/bin/etrt")
    work = args.workdir or tempfile.mkdtemp(prefix="etrt_bench_models_")
    os.makedirs(work, exist_ok=True)
    log("bench-models: %s, torch %s, etrt %s, work in %s" %
        (torch.cuda.get_device_name(0), torch.__version__, etrt, work))
    rows = []
    for model_name in args.models.split(","):
        model = resnet50() if model_name == "resnet50" else bert_base()
        batches = [int(b) for b in args.batches.split(",")]
        if model_name == "bert":
            batches = [b for b in batches if b <= 32]
        for batch in batches:
            row = {"model": model_name, "batch": batch}
            rows.append(row)
            x = make_input(model_name, batch, 1234 + batch)
            xt = torch.from_numpy(x)
            onnx_path = os.path.join(work, "%s_bs%d.onnx" % (model_name, batch))
            in_path = os.path.join(work, "%s_bs%d_in.npy" % (model_name, batch))
            np.save(in_path, x)
            # The float32 reference (cuDNN/cuBLAS in float32, TF32 off).
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            with torch.no_grad():
                ref = model.float().cuda()(xt.cuda()).float().cpu().numpy()
                model.cpu()
                t = time.time()
                export(model, model_name, xt, onnx_path)
            log("%s bs%d: exported in %.1f s" % (model_name, batch, time.time() - t))
            # etrt, each precision.
            for prec in args.precisions.split(","):
                pte = os.path.join(work, "%s_bs%d_%s.pte" % (model_name, batch, prec))
                code, out, secs = run([etrt, "build", onnx_path, "-o", pte, "--device", "cuda:0",
                                       "--precision", prec, "--io-on-device", "--quiet"], 600)
                if code != 0:
                    log("  etrt build %s failed (%d):\n%s" % (prec, code, out[-2000:]))
                    row[prec] = "build failed"
                    continue
                log("  etrt build %s: %.1f s" % (prec, secs))
                row["peak_" + prec] = etrt_peak(etrt, pte)
                outdir = os.path.join(work, "out_%s_bs%d_%s" % (model_name, batch, prec))
                ios = ["device"] + ([] if args.no_pinned else ["pinned"])
                if prec == "fp16":
                    ios.append("nographs")  # device I/O, live launches: what graphs save
                for io in ios:
                    cmd = [etrt, "run", pte, "--input", in_path, "--iterations", str(args.runs),
                           "--io", "device" if io == "nographs" else io]
                    if io == "device":
                        cmd += ["--output-dir", outdir]
                    env = dict(os.environ, ETRT_CUDA_GRAPHS="0") if io == "nographs" else None
                    code, out, _ = run(cmd, 600, env)
                    ms = parse_ms(out) if code == 0 else None
                    if ms is None:
                        log("  etrt run %s --io %s failed (%d):\n%s" % (prec, io, code, out[-2000:]))
                    row["%s_%s" % (prec, io)] = ms
                if args.profile and prec == "fp16":
                    try:
                        prof = kernel_profile.profile(etrt, pte, in_path)
                        top = kernel_profile.format_top(*prof)
                        row["profile"] = top
                        row["launches"] = prof[2]
                        log("  etrt fp16 kernels (ncu):\n" + top)
                    except (RuntimeError, subprocess.TimeoutExpired, FileNotFoundError) as e:
                        log("  ncu profile failed: %s" % e)
                y = os.path.join(outdir, "output_0.npy")
                if os.path.exists(y):
                    got = np.load(y).astype(np.float64).reshape(ref.shape)
                    row["err_" + prec] = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
                    if model_name == "resnet50":
                        row["top1_" + prec] = float((got.argmax(1) == ref.argmax(1)).mean())
                log("  etrt %s: device %s ms, pinned %s ms, error %s, peak %s bytes" %
                    (prec, row.get(prec + "_device"), row.get(prec + "_pinned"),
                     row.get("err_" + prec), row.get("peak_" + prec)))
            # PyTorch float16, as a careful user runs it.
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
            m16 = model.half().cuda()
            xin = xt.cuda()
            if model_name == "resnet50":
                m16 = m16.to(memory_format=torch.channels_last)
                xin = xin.half().contiguous(memory_format=torch.channels_last)
            with torch.no_grad():
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
                row["eager"] = median_ms(lambda: m16(xin), args.runs)
                row["peak_torch"] = torch.cuda.max_memory_allocated()
                log("  torch eager fp16: %.3f ms, peak %d bytes" % (row["eager"], row["peak_torch"]))
                if not args.no_compile:
                    modes = ["reduce-overhead"] + (["max-autotune"] if args.max_autotune else [])
                    best = None
                    for mode in modes:
                        try:
                            torch._dynamo.reset()
                            c = torch.compile(m16, mode=mode)
                            t = time.time()
                            for _ in range(3):
                                c(xin)
                            torch.cuda.synchronize()
                            ms = median_ms(lambda: c(xin), args.runs)
                            log("  torch.compile %s: %.3f ms (compiled in %.0f s)" %
                                (mode, ms, time.time() - t))
                            if best is None or ms < best[0]:
                                best = (ms, mode)
                        except Exception as e:
                            log("  torch.compile %s failed: %s" % (mode, e))
                    if best:
                        row["compile"], row["compile_mode"] = best
            model = model.float().cpu()
            del m16
            torch.cuda.empty_cache()

    def f(v, fmt="%.3f"):
        return fmt % v if isinstance(v, (int, float)) else (v or "-")

    def mib(v):
        return "%.0f" % (v / 2**20) if isinstance(v, (int, float)) else "-"

    for r in rows:
        if r.get("profile"):
            log("")
            log("%s bs%d, etrt fp16, top kernels (ncu):" % (r["model"], r["batch"]))
            log(r["profile"])
    log("")
    log("| model | batch | etrt fp32 | etrt fp16 | etrt bf16 | fp16 pinned | fp16 no graphs | eager "
        "fp16 | compile fp16 | fp16 / compile | peak MiB etrt fp16 / torch | err fp32 / fp16 / bf16 "
        "| top-1 fp16 | launches fp16 |")
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        comp = r.get("compile")
        ratio = (r["fp16_device"] / comp) if isinstance(r.get("fp16_device"), float) and comp else None
        log("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s / %s | %s | %s |" % (
            r["model"], r["batch"], f(r.get("fp32_device")), f(r.get("fp16_device")),
            f(r.get("bf16_device")), f(r.get("fp16_pinned")), f(r.get("fp16_nographs")),
            f(r.get("eager")),
            f(comp) + (" (%s)" % r["compile_mode"] if comp else ""),
            f(ratio, "%.2fx"), mib(r.get("peak_fp16")), mib(r.get("peak_torch")),
            f(r.get("err_fp32"), "%.1e"), f(r.get("err_fp16"), "%.1e"), f(r.get("err_bf16"), "%.1e"),
            f(r.get("top1_fp16"), "%.2f"), f(r.get("launches"), "%.0f")))
    log("(times: median ms per inference over %d runs; etrt with device I/O unless 'pinned'; "
        "launches per inference from the kernel profile, with --profile)" % args.runs)
    with open(os.path.join(work, "bench_models.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
