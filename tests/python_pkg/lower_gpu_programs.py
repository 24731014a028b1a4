"""Lowers the test models with EtrtPartitioner for cuda:0 (device and host I/O) and keeps
each one's inputs and eager output beside it, so that test_pkg_gpu.py runs on a GPU
machine without ExecuTorch's exporter (ETRT_GPU_PROGRAMS=DIR). Lowering needs no GPU.

    python lower_gpu_programs.py DIR"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS  # noqa: E402


def lower_to(name, io, folder):
    """(eager output, inputs, path of the .pte lowered for cuda:0 with `io` placement)."""
    from executorch.exir import to_edge_transform_and_lower

    from etrt.executorch import EtrtPartitioner

    model, inputs = MODELS[name]()
    partitioner = EtrtPartitioner(device="cuda:0", io=io)
    edge = to_edge_transform_and_lower(torch.export.export(model, inputs), partitioner=[partitioner])
    pte = os.path.join(folder, "%s_%s.pte" % (name, io))
    with open(pte, "wb") as f:
        f.write(edge.to_executorch(partitioner.backend_config()).buffer)
    with torch.no_grad():
        expected = model(*inputs).detach()
    return expected, inputs, pte


def main(folder):
    os.makedirs(folder, exist_ok=True)
    for name in sorted(MODELS):
        for io in ("device", "host"):
            expected, inputs, _ = lower_to(name, io, folder)
        np.savez(os.path.join(folder, name + "_inputs.npz"),
                 **{"arg%d" % i: t.numpy() for i, t in enumerate(inputs)})
        np.save(os.path.join(folder, name + "_expected.npy"), expected.numpy())
        print("lowered", name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
