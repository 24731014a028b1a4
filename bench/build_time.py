"""How long `etrt build` takes on a ~100 MB model (an MLP of six 2048x2048 float32
layers), printed for a CPU build and a (simulated) GPU build: the median of several
runs. The goal is under 10 s with a Release build. A benchmark, not a test: it prints
figures and asserts only that the program holds the weights.

    make bench-build        (or: ETRT_BIN=build/bin/etrt python3 bench/build_time.py)"""
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import build_testing as bt  # noqa: E402

WIDTH, LAYERS = 2048, 6


def big_mlp():
    rng = np.random.default_rng(5)
    nodes, inits, x = [], [], "x"
    for i in range(LAYERS):
        w = rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) * 0.02
        b = rng.standard_normal(WIDTH, dtype=np.float32) * 0.02
        inits += [numpy_helper.from_array(w, "W%d" % i), numpy_helper.from_array(b, "B%d" % i)]
        nodes += [helper.make_node("MatMul", [x, "W%d" % i], ["m%d" % i], name="fc%d" % i),
                  helper.make_node("Add", ["m%d" % i, "B%d" % i], ["a%d" % i], name="bias%d" % i)]
        x = "a%d" % i
        if i + 1 < LAYERS:
            nodes.append(helper.make_node("Relu", [x], ["r%d" % i], name="relu%d" % i))
            x = "r%d" % i
    graph = helper.make_graph(nodes, "big_mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", WIDTH])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", WIDTH])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    model = bt.save_model(big_mlp(), "big_mlp.onnx")
    size_mb = os.path.getsize(model) / 1e6
    runs = int(os.environ.get("ETRT_BENCH_RUNS", "5"))
    for device, env in (("cpu", bt.cpu_env()), ("cuda:0", bt.sim_env())):
        times = []
        for _ in range(runs):
            start = time.monotonic()
            pte, err = bt.build(model, "big_mlp.pte", "--device", device, "--shape", "batch:1:64", env=env)
            times.append(time.monotonic() - start)
            bt.check(os.path.getsize(pte) > size_mb * 1e6 * 0.99, "the weights are in the program")
            os.remove(pte)
        times.sort()
        print("etrt build of a %.1f MB model for %s: median %.2f s, min %.2f s, max %.2f s over %d runs (goal under 10 s)"
              % (size_mb, device, times[len(times) // 2], times[0], times[-1], runs))
    bt.finish("build_time")


if __name__ == "__main__":
    main()
