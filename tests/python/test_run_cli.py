"""`etrt run` from the command line: the real ExecuTorch fixtures with .npy and .pb
inputs, every contract option on simulated GPUs, the no-GPU message and --allow-cpu,
bad input (exit status 2, nothing on standard output), --output-dir made when missing,
programs with device-resident I/O under every --io, --io device on the program's own
GPU, times in the unit that fits, --threads (the same outputs whatever the count), and
bfloat16 in and out (.npy as ml_dtypes saves it, read back with np.load; .pb)."""
import os
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

FIXTURES = os.environ.get("ETRT_FIXTURES_DIR", os.path.join(bt.ROOT, "tests", "data"))


def run(args, env=None):
    return subprocess.run([bt.ETRT] + args, capture_output=True, text=True, env=env or bt.cpu_env())


def test_fixtures():
    a, b = np.array([2.5], np.float32), np.array([-0.75], np.float32)
    np.save(bt.path("a.npy"), a)
    with open(bt.path("b.pb"), "wb") as f:  # a TensorProto input works as well as .npy
        f.write(numpy_helper.from_array(b, "b").SerializeToString())
    out = bt.path("add_out")
    os.makedirs(out, exist_ok=True)
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--input", bt.path("a.npy"),
             "--input", bt.path("b.pb"), "--output-dir", out, "--iterations", "3"])
    bt.check(r.returncode == 0, "add.pte runs: " + r.stderr)
    if r.returncode == 0:
        got = np.load(os.path.join(out, "output_0.npy"))
        bt.check(got.dtype == np.float32 and got.shape == (1,) and got[0] == 1.75, "add.pte gives a + b: %s" % got)
        bt.check("output 0: float32 [1]" in r.stdout and "time per iteration" in r.stdout, "summary: " + r.stdout)
    r = run(["run", os.path.join(FIXTURES, "pte", "linear_inline_constants.pte"), "--random-inputs", "3",
             "--output-dir", out])
    bt.check(r.returncode == 0 and os.path.exists(os.path.join(out, "output_0.npy")), "random inputs: " + r.stderr)


def test_bad_input():
    junk = bt.path("junk.pte")
    with open(junk, "wb") as f:
        f.write(b"this is not a program at all")
    r = run(["run", junk])
    bt.check(r.returncode == 2 and r.stdout == "" and "not an ExecuTorch program" in r.stderr,
             "junk refused with status 2: %d %r" % (r.returncode, r.stderr))
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--input", bt.path("a.npy")])
    bt.check(r.returncode == 2 and "takes 2 input(s), 1 given" in r.stderr, "input count: " + r.stderr)
    np.save(bt.path("wrong.npy"), np.zeros((3,), np.float32))
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--input", bt.path("wrong.npy"),
             "--input", bt.path("wrong.npy")])
    bt.check(r.returncode == 2 and "axis 0: size 3" in r.stderr, "input shape: " + r.stderr)
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--frobnicate"])
    bt.check(r.returncode == 2 and "unknown option" in r.stderr, "unknown option: " + r.stderr)
    r = run(["run", "--help"])
    bt.check(r.returncode == 0 and "--io host|pinned|device" in r.stdout, "help")
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--io", "device", "--random-inputs", "1"])
    bt.check(r.returncode == 2 and "need a GPU" in r.stderr, "--io device without a GPU: " + r.stderr)


def test_contract_options_on_sim():
    env = bt.sim_env(1)
    mlp = bt.path("mlp.pte")
    r = run(["demo", "-o", mlp, "--iterations", "1"], env=env)
    bt.check(r.returncode == 0 and "built for cuda:0" in r.stdout, "demo on sim: " + r.stderr)
    base = run(["run", mlp, "--random-inputs", "7"], env=env)
    bt.check(base.returncode == 0, "host I/O on sim: " + base.stderr)
    checksum = [l for l in base.stdout.splitlines() if l.startswith("output 0")]
    for flags in (["--io", "pinned"], ["--io", "device"], ["--io", "device", "--async"], ["--stream", "caller"],
                  ["--sms", "16"], ["--io", "device", "--stream", "caller", "--check-cpu"]):
        r = run(["run", mlp, "--random-inputs", "7"] + flags, env=env)
        got = [l for l in r.stdout.splitlines() if l.startswith("output 0")]
        bt.check(r.returncode == 0 and got == checksum, "%s: same outputs (%s) %s" % (flags, got, r.stderr))
        if "--sms" in flags:
            bt.check("16 SMs asked, 16 granted" in r.stdout, "--sms prints the SMs granted: " + r.stdout)
        if "--check-cpu" in flags:
            # The simulated GPU runs etrt's kernels; the CPU may run oneDNN's (another
            # summation order): equal to within rounding.
            m = re.search(r"check-cpu: largest difference (\S+)", r.stdout)
            bt.check(m is not None and float(m.group(1)) <= 1e-6, "--check-cpu: " + r.stdout)
    r = run(["run", mlp, "--random-inputs", "7", "--async"], env=env)
    bt.check(r.returncode == 2 and "needs --io device" in r.stderr, "--async with host outputs refused: " + r.stderr)
    # --profile-range: the first execute stays outside the range, so it needs two; a
    # simulated GPU has no profiler to tell, and with no GPU there is none either.
    r = run(["run", mlp, "--random-inputs", "7", "--profile-range"], env=env)
    bt.check(r.returncode == 2 and "needs --iterations 2 or more" in r.stderr, "--profile-range alone: " + r.stderr)
    r = run(["run", mlp, "--random-inputs", "7", "--profile-range", "--iterations", "2"], env=env)
    bt.check(r.returncode == 2 and "the sim device has no profiler" in r.stderr,
             "--profile-range on sim: " + r.stderr)
    r = run(["run", mlp, "--random-inputs", "7", "--profile-range", "--iterations", "2", "--allow-cpu"])
    bt.check(r.returncode == 2 and "need a GPU" in r.stderr, "--profile-range without a GPU: " + r.stderr)
    # With no GPU a CUDA plan says so plainly; --allow-cpu runs it on the CPU.
    r = run(["run", mlp, "--random-inputs", "7"])
    bt.check(r.returncode != 0 and "no GPU is present" in r.stderr and "--allow-cpu" in r.stderr,
             "no GPU: " + r.stderr)
    r = run(["run", mlp, "--random-inputs", "7", "--allow-cpu"])
    got = [l for l in r.stdout.splitlines() if l.startswith("output 0")]
    bt.check(r.returncode == 0 and len(got) == 1 and len(checksum) == 1 and
             abs(float(got[0].split()[-1]) - float(checksum[0].split()[-1])) <= 1e-5,
             "--allow-cpu: same outputs to within rounding (%s vs %s) %s" % (got, checksum, r.stderr))


def test_output_dir():
    add = os.path.join(FIXTURES, "pte", "add.pte")
    nested = bt.path(os.path.join("made", "by", "run"))
    r = run(["run", add, "--random-inputs", "1", "--output-dir", nested])
    bt.check(r.returncode == 0 and os.path.isfile(os.path.join(nested, "output_0.npy")),
             "--output-dir and its missing parents are created: %d %s" % (r.returncode, r.stderr))
    # A file where the folder should be: refused as bad input before anything runs.
    blocker = bt.path("a_file")
    with open(blocker, "w") as f:
        f.write("keep")
    for target in (blocker, os.path.join(blocker, "below")):
        r = run(["run", add, "--random-inputs", "1", "--output-dir", target])
        bt.check(r.returncode == 2 and r.stdout == "" and "is not a directory" in r.stderr,
                 "--output-dir %s: exit 2, nothing run: %d %r %r" % (target, r.returncode, r.stdout, r.stderr))
    with open(blocker) as f:
        bt.check(f.read() == "keep", "the file in the way is untouched")
    bt.check(not os.path.exists(os.path.join(blocker, "output_0.npy")), "nothing written")


def small_model():
    """x[2,8] -> MatMul -> Relu -> y[2,6]: one GPU partition."""
    w = np.linspace(-1.0, 1.0, 48, dtype=np.float32).reshape(8, 6)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
                              [numpy_helper.from_array(w, "W")])
    return bt.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "small.onnx")


def run_outputs(pte, flags, env, tag):
    """Runs pte on small.npy with flags; returns (result, output 0 or None)."""
    out = bt.path(tag)
    os.makedirs(out, exist_ok=True)  # test_output_dir covers a missing folder
    r = run(["run", pte, "--input", bt.path("small.npy"), "--output-dir", out] + flags, env=env)
    path = os.path.join(out, "output_0.npy")
    return r, (np.load(path) if r.returncode == 0 and os.path.exists(path) else None)


def test_device_io_programs():
    model = small_model()
    x = np.linspace(-2.0, 2.0, 16, dtype=np.float32).reshape(2, 8)
    np.save(bt.path("small.npy"), x)
    env = bt.sim_env(2)
    cpu_pte, _ = bt.build(model, "small_cpu.pte", "--device", "cpu", "--quiet", env=env)
    r, want = run_outputs(cpu_pte, [], env, "small_cpu_out")
    if not bt.check(want is not None and want.shape == (2, 6), "CPU-built program runs: " + r.stderr):
        return
    # Device-resident I/O (--io-on-device): host and pinned buffers are staged by the
    # delegate (rule 3), device buffers are bound in place.
    for device in ("cuda:0", "cuda:1"):
        pte, _ = bt.build(model, "small_io_%s.pte" % device[-1], "--device", device, "--io-on-device", "--quiet",
                          env=env)
        for flags in (["--io", "host"], ["--io", "pinned"], ["--io", "device"], ["--io", "host", "--check-cpu"],
                      ["--io", "device", "--stream", "caller", "--async"]):
            tag = "small_io_%s_%s" % (device[-1], "_".join(f.strip("-") for f in flags))
            r, got = run_outputs(pte, flags, env, tag)
            # The CPU build may run oneDNN's matrix kernels (another summation order).
            bt.check(got is not None and got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6),
                     "--io-on-device %s %s: outputs equal the CPU build's to within rounding: %s %s" % (
                         device, flags, got, r.stderr))
    # --io device places buffers on the program's GPU (cuda:1 here), for host-planned
    # and device-planned I/O alike; ETRT_LOG=info says where.
    log_env = dict(env, ETRT_LOG="info")
    for extra in ([], ["--io-on-device"]):
        pte, _ = bt.build(model, "small_cuda1%s.pte" % ("_io" if extra else ""), "--device", "cuda:1", "--quiet",
                          *extra, env=env)
        r, got = run_outputs(pte, ["--io", "device"], log_env, "small_cuda1_device%s" % ("_io" if extra else ""))
        bt.check(got is not None and got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6),
                 "cuda:1 %s --io device: outputs %s %s" % (extra, got, r.stderr))
        bt.check("device memory on cuda:1" in r.stderr and "device memory on cuda:0" not in r.stderr,
                 "cuda:1 %s --io device allocates on cuda:1: %s" % (extra, r.stderr))
    r = run(["run", cpu_pte, "--random-inputs", "1", "--io", "device"], env=env)
    bt.check(r.returncode == 2 and "the program runs on the CPU" in r.stderr, "--io device for a CPU program: " + r.stderr)


def test_duration_units():
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--random-inputs", "1", "--iterations", "5"])
    m = re.search(r"time per iteration: (\S+) (ns|\u00b5s|ms|s) \(median of 5\)", r.stdout)
    bt.check(m is not None, "time per iteration with a unit: " + r.stdout + r.stderr)
    if m:
        digits = m.group(1).replace(".", "").lstrip("0")
        bt.check(len(digits) == 3 or float(m.group(1)) >= 1000, "three significant figures: " + m.group(0))
        bt.check(float(m.group(1)) > 0, "a fast run is not reported as zero: " + m.group(0))


def conv_model():
    """x[2,8,17,17] -> Conv 3x3 (bias) -> Relu -> depthwise Conv 3x3 -> MatMul -> y: CPU kernels
    large enough to be split over threads."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((32, 8, 3, 3)).astype(np.float32)
    b1 = rng.standard_normal((32,)).astype(np.float32)
    w2 = rng.standard_normal((32, 1, 3, 3)).astype(np.float32)
    w3 = rng.standard_normal((17, 40)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W1", "B1"], ["h1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("Conv", ["h2", "W2"], ["h3"], group=32, pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("MatMul", ["h3", "W3"], ["y"])]
    graph = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 17, 17])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 17, 40])],
                              [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1"),
                               numpy_helper.from_array(w2, "W2"), numpy_helper.from_array(w3, "W3")])
    return bt.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "convs.onnx")


def test_threads():
    pte, _ = bt.build(conv_model(), "convs.pte", "--device", "cpu", "--quiet")
    # etrt's own kernels give the same bits at every thread count; oneDNN's (the default
    # where the build has it) may split a sum differently, so they agree to rounding.
    for kernels in ("etrt", "default"):
        env = bt.cpu_env()
        env.pop("ETRT_CPU_KERNELS", None)
        if kernels == "etrt":
            env["ETRT_CPU_KERNELS"] = "etrt"
        outputs = {}
        for threads in ("1", "2", "5"):
            out = bt.path("threads_%s_%s" % (kernels, threads))
            os.makedirs(out, exist_ok=True)
            r = run(["run", pte, "--random-inputs", "4", "--threads", threads, "--output-dir", out], env=env)
            bt.check(r.returncode == 0, "--threads %s (%s kernels) runs: %s" % (threads, kernels, r.stderr))
            if r.returncode == 0:
                outputs[threads] = np.load(os.path.join(out, "output_0.npy"))
        same = np.array_equal if kernels == "etrt" else (lambda a, b: np.allclose(a, b, rtol=1e-5, atol=1e-5))
        bt.check(len(outputs) == 3 and all(same(outputs["1"], o) for o in outputs.values()),
                 "the same outputs with 1, 2 and 5 threads (%s kernels)" % kernels)
    for bad in ("0", "-2", "many"):
        r = run(["run", pte, "--random-inputs", "4", "--threads", bad])
        bt.check(r.returncode == 2 and "--threads takes a count" in r.stderr, "--threads %s refused: %s" % (bad, r.stderr))
    r = run(["run", "--help"])
    bt.check("--threads N" in r.stdout, "--threads in the help")


def test_bfloat16():
    """bfloat16 in: .pb as BFLOAT16 or as the uint16 bits of the ONNX test data, .npy as
    ml_dtypes saves it ('<V2') or NumPy saves a loaded copy ('|V2'); bfloat16 out: .npy
    '<V2', whose uint16 view is the bits (ml_dtypes' view(bfloat16) gives the values)."""
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["y"], ["z"], to=TensorProto.BFLOAT16)]
    graph = helper.make_graph(nodes, "bf16", [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("z", TensorProto.BFLOAT16, [3])])
    model = bt.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "bf16.onnx")
    pte, _ = bt.build(model, "bf16.pte")
    bits = np.array([0x3F80, 0xC020, 0x4040], np.uint16)  # 1, -2.5, 3
    inputs = {}
    inputs["bf16.pb"] = helper.make_tensor("x", TensorProto.BFLOAT16, [3], [1.0, -2.5, 3.0]).SerializeToString()
    inputs["u16.pb"] = numpy_helper.from_array(bits, "x").SerializeToString()
    np.save(bt.path("void.npy"), bits.view("V2"))
    with open(bt.path("void.npy"), "rb") as f:
        saved = f.read()
    bt.check(b"'|V2'" in saved, "NumPy saves a 2-byte void as '|V2'")
    inputs["void.npy"] = saved
    inputs["ml_dtypes.npy"] = saved.replace(b"'|V2'", b"'<V2'")
    for name, data in inputs.items():
        with open(bt.path(name), "wb") as f:
            f.write(data)
        out = bt.path("bf16_out_" + name.replace(".", "_"))
        r = run(["run", pte, "--input", bt.path(name), "--output-dir", out])
        bt.check(r.returncode == 0, "%s runs: %s" % (name, r.stderr))
        if r.returncode != 0:
            continue
        y = np.load(os.path.join(out, "output_0.npy"))
        bt.check(y.dtype == np.float32 and list(y) == [1.0, -2.5, 3.0], "%s read as bfloat16: %s" % (name, y))
        with open(os.path.join(out, "output_1.npy"), "rb") as f:
            bt.check(b"'descr': '<V2'" in f.read(128), "%s: bfloat16 written as '<V2'" % name)
        z = np.load(os.path.join(out, "output_1.npy"))
        bt.check(z.dtype.itemsize == 2 and list(z.view(np.uint16)) == list(bits), "%s: output bits %s" % (name, z))
        bt.check("output 1: bfloat16 [3] checksum 1.5" in r.stdout, "%s: bfloat16 checksum: %s" % (name, r.stdout))
    # What NumPy users read: ml_dtypes' np.save writes the same bytes, and np.load with a
    # view as ml_dtypes.bfloat16 gives the values (where ml_dtypes is installed).
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
        print("SKIP: ml_dtypes is not installed: the bfloat16 .npy read-back is checked by its bits only")
    written = os.path.join(bt.path("bf16_out_bf16_pb"), "output_1.npy")
    if ml_dtypes is not None and os.path.exists(written):
        values = np.array([1.0, -2.5, 3.0], ml_dtypes.bfloat16)
        np.save(bt.path("ml_dtypes_saved.npy"), values)
        with open(bt.path("ml_dtypes_saved.npy"), "rb") as f, open(written, "rb") as g:
            bt.check(f.read() == g.read(), "etrt writes bfloat16 .npy byte for byte as ml_dtypes' np.save does")
        z = np.load(written).view(ml_dtypes.bfloat16)
        bt.check(z.dtype == ml_dtypes.bfloat16 and list(z.astype(np.float32)) == [1.0, -2.5, 3.0],
                 "np.load + view(ml_dtypes.bfloat16) reads etrt's output: %s" % z)
        # and an ml_dtypes file goes back in as bfloat16
        r = run(["run", pte, "--input", bt.path("ml_dtypes_saved.npy")])
        bt.check(r.returncode == 0 and "output 0: float32 [3] checksum 1.5" in r.stdout,
                 "ml_dtypes' np.save read as bfloat16: " + r.stdout + r.stderr)
    # --output-format pb: a TensorProto of type BFLOAT16 holding the bits
    out = bt.path("bf16_out_pb_format")
    r = run(["run", pte, "--input", bt.path("bf16.pb"), "--output-dir", out, "--output-format", "pb"])
    bt.check(r.returncode == 0, "--output-format pb: " + r.stderr)
    if r.returncode == 0:
        t = TensorProto()
        with open(os.path.join(out, "output_1.pb"), "rb") as f:
            t.ParseFromString(f.read())
        bt.check(t.data_type == TensorProto.BFLOAT16 and list(t.dims) == [3] and
                 list(np.frombuffer(t.raw_data, np.uint16)) == list(bits), "bfloat16 written as BFLOAT16: %s" % t)
        y = numpy_helper.to_array(TensorProto.FromString(open(os.path.join(out, "output_0.pb"), "rb").read()))
        bt.check(y.dtype == np.float32 and list(y) == [1.0, -2.5, 3.0], "float32 .pb output: %s" % y)
        # what etrt wrote goes back in
        r = run(["run", pte, "--input", os.path.join(out, "output_1.pb")])
        bt.check(r.returncode == 0 and "output 1: bfloat16 [3] checksum 1.5" in r.stdout,
                 "a bfloat16 .pb etrt wrote reads back: " + r.stdout + r.stderr)
    # uint16 is taken as bfloat16 bits only from .pb (the ONNX test data's convention)
    np.save(bt.path("u16.npy"), bits)
    r = run(["run", pte, "--input", bt.path("u16.npy")])
    bt.check(r.returncode == 2 and "dtype uint16, the method takes bfloat16" in r.stderr, "uint16 .npy refused: " + r.stderr)
    # and never into an input of another type
    inputs_f32 = bt.path("u16_for_f32.pb")
    with open(inputs_f32, "wb") as f:
        f.write(numpy_helper.from_array(bits, "a").SerializeToString())
    r = run(["run", os.path.join(FIXTURES, "pte", "add.pte"), "--input", inputs_f32, "--input", inputs_f32])
    bt.check(r.returncode == 2 and "dtype uint16, the method takes float32" in r.stderr, "uint16 .pb into float32: " + r.stderr)


if __name__ == "__main__":
    test_fixtures()
    test_bad_input()
    test_contract_options_on_sim()
    test_output_dir()
    test_device_io_programs()
    test_duration_units()
    test_threads()
    test_bfloat16()
    bt.finish("test_run_cli")
