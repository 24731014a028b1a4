"""Holds `etrt inspect --json` against ExecuTorch's own deserializer on every program of a
corpus folder: per method, every tensor value's sizes and dtype, every instruction's
arguments and the planned buffer sizes. Exit status 1 and the differences when they
disagree. Run inside the environment of `make venv-executorch` (make test-executorch does).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.exir.schema import Tensor

# ExecuTorch's ScalarType codes, spelled as etrt inspect spells dtypes.
DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
          7: "float64", 11: "bool", 15: "bfloat16"}


def differences(etrt, path):
    with open(path, "rb") as f:
        read = deserialize_pte_binary(f.read())
    program = getattr(read, "program", read)
    r = subprocess.run([etrt, "inspect", "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        return ["etrt inspect refuses it: " + r.stderr.strip()]
    methods = {m["name"]: m for m in json.loads(r.stdout)["methods"]}
    found = []
    if sorted(methods) != sorted(p.name for p in program.execution_plan):
        found.append("methods %s vs %s" % (sorted(methods), sorted(p.name for p in program.execution_plan)))
    for plan in program.execution_plan:
        ours = methods.get(plan.name)
        if ours is None:
            continue
        tensors = {t["index"]: t for t in ours["tensors"]}
        count = 0
        for i, value in enumerate(plan.values):
            if not isinstance(value.val, Tensor):
                continue
            count += 1
            t = tensors.get(i)
            want = (list(value.val.sizes), DTYPES.get(int(value.val.scalar_type), str(value.val.scalar_type)))
            if t is None or (t["sizes"], t["dtype"]) != want:
                found.append("%s value %d: etrt %s, ExecuTorch %s" % (plan.name, i, t and (t["sizes"], t["dtype"]), want))
        if count != len(tensors):
            found.append("%s: %d tensors, ExecuTorch %d" % (plan.name, len(tensors), count))
        instructions = [ins for chain in plan.chains for ins in chain.instructions]
        if len(instructions) != len(ours["instructions"]):
            found.append("%s: %d instructions, ExecuTorch %d" % (plan.name, len(ours["instructions"]), len(instructions)))
        for k, (theirs, mine) in enumerate(zip(instructions, ours["instructions"])):
            args = getattr(theirs.instr_args, "args", None)
            if args is not None and list(args) != mine.get("args"):
                found.append("%s instruction %d: args %s, ExecuTorch %s" % (plan.name, k, mine.get("args"), list(args)))
        if list(plan.non_const_buffer_sizes) != ours["non_const_buffer_sizes"]:
            found.append("%s: buffers %s, ExecuTorch %s" % (plan.name, ours["non_const_buffer_sizes"],
                                                              list(plan.non_const_buffer_sizes)))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--etrt", required=True)
    parser.add_argument("--corpus", required=True)
    args = parser.parse_args()
    failed = 0
    for path in sorted(glob.glob(os.path.join(args.corpus, "*.pte"))):
        found = differences(args.etrt, path)
        print("%s: %s" % (os.path.basename(path), "agrees" if not found else "DISAGREES"))
        for line in found[:20]:
            print("  " + line)
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
