"""Lowers a torchvision ResNet and a small transformer to etrt with EtrtPartitioner, saves
the programs, runs them from Python (etrt.load) and with `etrt run`, and compares both
with eager PyTorch.

    python3 examples/python/lower_and_run.py [--device cpu|cuda:0] [--model resnet|transformer]
                                             [--out DIR] [--etrt PATH-TO-etrt]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from executorch.exir import to_edge_transform_and_lower

import etrt
from etrt.executorch import EtrtPartitioner


def resnet():
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=100)
    return model.eval(), (torch.randn(1, 3, 64, 64),)


class SmallTransformer(torch.nn.Module):
    """Token embedding, two encoder layers, a classifier over the mean token."""

    def __init__(self, vocab=100, dim=64, heads=4, layers=2, classes=10):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def transformer():
    torch.manual_seed(0)
    return SmallTransformer().eval(), (torch.randint(0, 100, (2, 16)),)


MODELS = {"resnet": resnet, "transformer": transformer}


def lower(name, device, out_dir):
    model, inputs = MODELS[name]()
    ep = torch.export.export(model, inputs)
    edge = to_edge_transform_and_lower(ep, partitioner=[EtrtPartitioner(device=device, io="host")])
    graph = edge.exported_program().graph_module.graph
    outside = sorted({str(n.target).split(".")[-2] for n in graph.nodes if n.op == "call_function"
                      and "delegate" not in str(n.target) and "getitem" not in str(n.target)})
    delegated = sum("executorch_call_delegate" in str(n.target) for n in graph.nodes)
    print("%s: %d delegate(s); left to the portable runtime: %s"
          % (name, delegated, ", ".join(outside) or "nothing"))
    path = os.path.join(out_dir, "%s.pte" % name)
    with open(path, "wb") as f:
        f.write(edge.to_executorch().buffer)
    return model, inputs, path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", choices=sorted(MODELS), action="append")
    parser.add_argument("--out", default=None, help="where the .pte files go (default: a temporary folder)")
    parser.add_argument("--etrt", default=shutil.which("etrt"), help="the etrt command line")
    args = parser.parse_args()
    out_dir = args.out or tempfile.mkdtemp(prefix="etrt-examples-")
    os.makedirs(out_dir, exist_ok=True)
    worst = 0.0
    for name in args.model or sorted(MODELS):
        model, inputs, path = lower(name, args.device, out_dir)
        expected = model(*inputs).detach().numpy()
        scale = max(float(np.abs(expected).max()), 1e-6)
        got = np.from_dlpack(etrt.load(path).run("forward", *inputs)[0])
        err = float(np.abs(got - expected).max()) / scale
        print("%s: etrt.load(...).run: max difference %.3g (relative to max |y|)" % (name, err))
        worst = max(worst, err)
        if args.etrt:
            cmd = [args.etrt, "run", path, "--output-dir", os.path.join(out_dir, name)]
            for i, t in enumerate(inputs):
                npy = os.path.join(out_dir, "%s_input%d.npy" % (name, i))
                np.save(npy, t.numpy())
                cmd += ["--input", npy]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            cli = np.load(os.path.join(out_dir, name, "output_0.npy"))
            err = float(np.abs(cli - expected).max()) / scale
            print("%s: etrt run: max difference %.3g" % (name, err))
            worst = max(worst, err)
    print("programs in %s" % out_dir)
    return 0 if worst <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
