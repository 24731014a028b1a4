"""The CUDA math libraries are loaded only by a GPU engine: the etrt binary does not
link cuBLAS or cuBLASLt (no NEEDED entry), `etrt --help` and CPU or simulated-GPU
runs never map them (the dynamic loader's LD_DEBUG=libs trace), and `etrt --help`
stays small: its peak resident memory is printed, and asserted below 16 MiB where the
build has no sanitizers (AddressSanitizer's shadow memory alone is larger)."""
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
    test_help_memory()
    bt.finish("test_lazy_cuda_libraries")
