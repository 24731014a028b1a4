"""The CUDA math libraries are loaded only by a GPU engine: the etrt binary does not
link cuBLAS or cuBLASLt (no NEEDED entry), `etrt --help` and CPU or simulated-GPU
runs never map them (the dynamic loader's LD_DEBUG=libs trace), and `etrt --help`
stays small: its peak resident memory is printed, and asserted below 16 MiB where the
build has no sanitizers (AddressSanitizer's shadow memory alone is larger).

oneDNN likewise: not linked, not mapped by --help, simulated-GPU runs or CPU plans
without convolutions or matrix products, nor by any run with ETRT_CPU_KERNELS=etrt;
mapped by a CPU run of a plan with a MatMul where the build uses it (its log says so)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_testing as bt  # noqa: E402

FIXTURES = os.environ.get("ETRT_FIXTURES_DIR", os.path.join(bt.ROOT, "..", "shared", "fixtures"))
LIMIT_KIB = 16 * 1024


def sanitized_build():
    cache = os.path.join(bt.BUILD_DIR, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache) as f:
            return any(line.strip() in ("ETRT_SANITIZE:BOOL=ON", "ETRT_FUZZ:BOOL=ON") for line in f)
    return "__asan_init" in subprocess.run(["nm", "-D", bt.ETRT], capture_output=True, text=True).stdout


def test_no_needed_entry():
    if shutil.which("readelf") is None:
        print("SKIP: no readelf")
        return
    r = subprocess.run(["readelf", "-d", bt.ETRT], capture_output=True, text=True)
    bt.check(r.returncode == 0, "readelf -d: " + r.stderr)
    needed = [l for l in r.stdout.splitlines() if "(NEEDED)" in l]
    bt.check(needed != [], "readelf lists the NEEDED entries: " + r.stdout)
    bt.check(not any("libcublas" in l for l in needed), "no NEEDED libcublas*: %s" % needed)
    bt.check(not any("libdnnl" in l for l in needed), "no NEEDED libdnnl*: %s" % needed)


def loaded_libraries(args, env):
    env = dict(env, LD_DEBUG="libs")
    r = subprocess.run([bt.ETRT] + args, capture_output=True, text=True, env=env)
    return r, [l for l in r.stderr.splitlines() if "calling init:" in l or "find library=" in l]


def test_nothing_maps_cublas():
    add = os.path.join(FIXTURES, "pte", "add.pte")
    for args, env, what in ((["--help"], os.environ, "etrt --help"),
                            (["run", add, "--random-inputs", "1"], bt.cpu_env(), "a CPU run"),
                            (["run", add, "--random-inputs", "1"], bt.sim_env(1), "a run on a simulated GPU")):
        r, lines = loaded_libraries(args, env)
        bt.check(r.returncode == 0, "%s: %s" % (what, r.stderr[-2000:]))
        bt.check(lines != [], "%s: LD_DEBUG=libs traces the loader" % what)
        bt.check(not any("libcublas" in l for l in lines),
                 "%s maps no libcublas*: %s" % (what, [l for l in lines if "libcublas" in l]))
        bt.check(not any("libdnnl" in l for l in lines),
                 "%s maps no libdnnl*: %s" % (what, [l for l in lines if "libdnnl" in l]))


def test_onednn_only_when_used():
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.linspace(-1, 1, 32 * 16, dtype=np.float32).reshape(32, 16), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], [w])
    model = bt.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "mm.onnx")
    pte, _ = bt.build(model, "mm.pte", "--device", "cpu", "--quiet")
    env = dict(bt.cpu_env(), ETRT_LOG="debug")
    env.pop("ETRT_CPU_KERNELS", None)
    r, lines = loaded_libraries(["run", pte, "--random-inputs", "1"], env)
    bt.check(r.returncode == 0, "a CPU run of a MatMul: " + r.stderr[-2000:])
    used = "1 nodes run by oneDNN" in r.stderr
    print("CPU kernels of this build: %s" % ("oneDNN" if used else "etrt's"))
    mapped = any("libdnnl" in l for l in lines)
    bt.check(mapped == used, "libdnnl is mapped (%s) exactly when oneDNN runs the MatMul (%s)" % (mapped, used))
    r, lines = loaded_libraries(["run", pte, "--random-inputs", "1"], dict(env, ETRT_CPU_KERNELS="etrt"))
    bt.check(r.returncode == 0 and "run by oneDNN" not in r.stderr, "ETRT_CPU_KERNELS=etrt: " + r.stderr[-2000:])
    bt.check(not any("libdnnl" in l for l in lines), "ETRT_CPU_KERNELS=etrt maps no libdnnl")


def test_help_memory():
    # From a small C parent: a child of Python would carry Python's size (see the tool).
    probe = os.path.join(bt.BUILD_DIR, "tests", "etrt_peak_rss")
    if not bt.check(os.path.exists(probe), "the test tool %s is built" % probe):
        return
    r = subprocess.run([probe, bt.ETRT, "--help"], capture_output=True, text=True)
    bt.check(r.returncode == 0 and "usage" in r.stdout.lower(), "etrt --help exits 0: %r" % r.stderr)
    lines = [l for l in r.stdout.splitlines() if l.startswith("peak_rss_kib ")]
    if not bt.check(len(lines) == 1, "peak resident memory reported: %r" % r.stdout[-500:]):
        return
    peak_kib = int(lines[0].split()[1])
    print("etrt --help: peak resident memory %.1f MiB" % (peak_kib / 1024.0))
    if sanitized_build():
        print("SKIP: sanitizer build: the %d MiB limit is checked in builds without sanitizers" % (LIMIT_KIB // 1024))
        return
    bt.check(peak_kib < LIMIT_KIB, "etrt --help peak resident memory %.1f MiB < 16 MiB" % (peak_kib / 1024.0))

if __name__ == "__main__":
    test_no_needed_entry()
    test_nothing_maps_cublas()
    test_onednn_only_when_used()
    test_help_memory()
    bt.finish("test_lazy_cuda_libraries")
