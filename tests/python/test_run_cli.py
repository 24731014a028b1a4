"""`etrt run` from the command line: the real ExecuTorch fixtures with .npy and .pb
inputs, every contract option on simulated GPUs, the no-GPU message and --allow-cpu,
and bad input (exit status 2, nothing on standard output)."""
import os
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

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
            bt.check("check-cpu: largest difference 0" in r.stdout, "--check-cpu: " + r.stdout)
    r = run(["run", mlp, "--random-inputs", "7", "--async"], env=env)
    bt.check(r.returncode == 2 and "needs --io device" in r.stderr, "--async with host outputs refused: " + r.stderr)
    # With no GPU a CUDA plan says so plainly; --allow-cpu runs it on the CPU.
    r = run(["run", mlp, "--random-inputs", "7"])
    bt.check(r.returncode != 0 and "no GPU is present" in r.stderr and "--allow-cpu" in r.stderr,
             "no GPU: " + r.stderr)
    r = run(["run", mlp, "--random-inputs", "7", "--allow-cpu"])
    got = [l for l in r.stdout.splitlines() if l.startswith("output 0")]
    bt.check(r.returncode == 0 and got == checksum, "--allow-cpu: same outputs (%s) %s" % (got, r.stderr))


if __name__ == "__main__":
    test_fixtures()
    test_bad_input()
    test_contract_options_on_sim()
    bt.finish("test_run_cli")
