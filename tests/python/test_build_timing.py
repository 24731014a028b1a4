"""How long `etrt build` takes on a ~100 MB model (an MLP of six 2048x2048 float32
layers): printed for a CPU build and a (simulated) GPU build. The goal is under 10 s;
the assertion allows a sanitizer build (about 10x slower) its own bound."""
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


def sanitized():
    try:
        with open(os.path.join(bt.BUILD_DIR, "CMakeCache.txt")) as f:
            return "ETRT_SANITIZE:BOOL=ON" in f.read()
    except OSError:
        return False


def main():
    model = bt.save_model(big_mlp(), "big_mlp.onnx")
    size_mb = os.path.getsize(model) / 1e6
    limit = 60.0 if sanitized() else 10.0
    for device, env in (("cpu", bt.cpu_env()), ("cuda:0", bt.sim_env())):
        start = time.monotonic()
        pte, err = bt.build(model, "big_mlp.pte", "--device", device, "--shape", "batch:1:64", env=env)
        seconds = time.monotonic() - start
        print("etrt build of a %.1f MB model for %s: %.2f s (goal under 10 s%s)"
              % (size_mb, device, seconds, "; sanitizer build, limit %.0f s" % limit if sanitized() else ""))
        print("  " + err.strip().replace("\n", "\n  "))
        bt.check(seconds < limit, "build took %.2f s, limit %.0f s" % (seconds, limit))
        bt.check(os.path.getsize(pte) > size_mb * 1e6 * 0.99, "the weights are in the program")
        os.remove(pte)
    bt.finish("test_build_timing")


if __name__ == "__main__":
    main()
