"""The C ONNX reader against the onnx package, on the same files.

Models and .pb tensors are made here with onnx.helper (every element type, typed fields
and raw_data, every attribute kind, subgraphs, symbolic dims, external data in one file
and in one file per tensor) and taken from the ONNX backend test data when it is
installed. The probe (tests/tools/onnx_probe.c) prints what the C reader makes of each
file; this test prints the same from what onnx reads, and the two must agree line for
line. Tensor values are compared through the SHA-256 of their bytes.
"""
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BUILD = os.environ.get("ETRT_BUILD_DIR", "build")
PROBE = os.path.join(BUILD, "tests", "etrt_onnx_probe")
TESTDATA = os.environ.get("ETRT_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")

# ONNX element types etrt holds, with etrt's names for them.
ETRT_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 16: "bfloat16"}
MAX_RANK = 8
SAFE = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-")

failures = []


def esc(value):
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return "".join(chr(c) if c in SAFE else "%%%02X" % c for c in data)


def q(value):
    return "'" + esc(value) + "'"


def host_bytes(t):
    """The bytes etrt's host tensor must hold, or None where etrt refuses the tensor."""
    if t.data_type not in ETRT_DTYPES or len(t.dims) > MAX_RANK:
        return None
    if t.data_type == TensorProto.BFLOAT16:  # numpy has no bfloat16: compare the bits
        if t.HasField("raw_data"):
            return t.raw_data
        return np.asarray(t.int32_data, dtype=np.int32).astype(np.uint16).tobytes()
    return np.ascontiguousarray(numpy_helper.to_array(t)).tobytes()


def tensor_lines(t, depth):
    data = host_bytes(t)
    value = "error=unsupported" if data is None else "sha=" + hashlib.sha256(data).hexdigest()
    dims = ",".join(str(d) for d in t.dims)
    return ["  " * depth + "tensor %s type=%d dims=[%s] %s" % (q(t.name), t.data_type, dims, value)]


def type_elem_shape(t, depth=0):
    """The element type and shape etrt records for a TypeProto: a tensor's own; what a
    sequence or optional holds, through at most two of them (deeper is not read)."""
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(t, which)
        if not tt.HasField("shape"):
            return tt.elem_type, "-"
        dims = []
        for d in tt.shape.dim:
            if d.WhichOneof("value") == "dim_value":
                dims.append(str(d.dim_value))
            elif d.WhichOneof("value") == "dim_param" and d.dim_param:
                dims.append("$" + esc(d.dim_param))
            else:
                dims.append("?")
        return tt.elem_type, "[" + ",".join(dims) + "]"
    if which in ("sequence_type", "optional_type") and depth < 2:
        inner = getattr(t, which)
        if inner.HasField("elem_type"):
            return type_elem_shape(inner.elem_type, depth + 1)
    return 0, "-"


def value_info_line(what, vi, depth):
    kinds = {"tensor_type": 1, "sequence_type": 4, "map_type": 5, "sparse_tensor_type": 8,
             "optional_type": 9}
    which = vi.type.WhichOneof("value") if vi.HasField("type") else None
    kind = kinds.get(which, 0)
    elem, shape = type_elem_shape(vi.type) if which else (0, "-")
    return "  " * depth + "%s %s kind=%d elem=%d shape=%s" % (what, q(vi.name), kind, elem, shape)


def attribute_lines(a, depth):
    line = "  " * depth + "attr %s type=%d" % (q(a.name), a.type)
    A = onnx.AttributeProto
    if a.type == A.FLOAT:
        line += " f=%08x" % struct.unpack("<I", struct.pack("<f", a.f))[0]
    elif a.type == A.INT:
        line += " i=%d" % a.i
    elif a.type == A.STRING:
        line += " s=" + q(a.s)
    elif a.type == A.FLOATS:
        line += " floats=[%s]" % ",".join(
            "%08x" % struct.unpack("<I", struct.pack("<f", f))[0] for f in a.floats)
    elif a.type == A.INTS:
        line += " ints=[%s]" % ",".join(str(i) for i in a.ints)
    elif a.type == A.STRINGS:
        line += " strings=[%s]" % ",".join(q(s) for s in a.strings)
    lines = [line]
    if a.HasField("t"):
        lines += tensor_lines(a.t, depth + 1)
    for t in a.tensors:
        lines += tensor_lines(t, depth + 1)
    if a.HasField("g"):
        lines += graph_lines(a.g, depth + 1)
    for g in a.graphs:
        lines += graph_lines(g, depth + 1)
    return lines


def graph_lines(g, depth):
    pad = "  " * depth
    lines = [pad + "graph " + q(g.name)]
    lines += [value_info_line("input", vi, depth) for vi in g.input]
    lines += [value_info_line("output", vi, depth) for vi in g.output]
    lines += [value_info_line("value_info", vi, depth) for vi in g.value_info]
    for t in g.initializer:
        lines += tensor_lines(t, depth)
    for n in g.node:
        lines.append(pad + "node %s %s %s in=%s out=%s" % (
            q(n.name), q(n.op_type), q(n.domain), ",".join(q(i) for i in n.input),
            ",".join(q(o) for o in n.output)))
        for a in n.attribute:
            lines += attribute_lines(a, depth + 1)
    return lines


def model_lines(path):
    m = onnx.load(path)  # loads external data too
    lines = ["file " + path, "model ir_version=%d producer=%s" % (m.ir_version, q(m.producer_name))]
    lines += ["opset %s %d" % (q(o.domain), o.version) for o in m.opset_import]
    lines += ["function %s %s" % (q(f.domain), q(f.name)) for f in m.functions]
    return lines + graph_lines(m.graph, 0)


def pb_lines(path, is_tensor=True):
    lines = ["file " + path]
    if not is_tensor:
        return lines + ["error=unsupported"]
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    data = host_bytes(t)
    if data is None:
        return lines + ["error=unsupported"]
    return lines + ["pb %s dtype=%s dims=[%s] sha=%s" % (
        q(t.name), ETRT_DTYPES[t.data_type], ",".join(str(d) for d in t.dims),
        hashlib.sha256(data).hexdigest())]


def probe(paths):
    """The probe's lines, grouped per file."""
    out = subprocess.run([PROBE] + paths, check=True, capture_output=True, text=True).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if line.startswith("file "):
            current = line[5:]
            groups[current] = [line]
        else:
            groups[current].append(line)
    return groups


def compare(expected_by_path, what):
    paths = list(expected_by_path)
    got = {}
    for start in range(0, len(paths), 200):
        got.update(probe(paths[start:start + 200]))
    bad = 0
    for path in paths:
        want, have = expected_by_path[path], got.get(path, [])
        # A refusal is compared by status only: the message is etrt's own.
        have = [h.split(" ")[0] if h.startswith("error=") else h for h in have]
        if want != have:
            bad += 1
            if bad <= 5:
                diff = [(i, w, h) for i, (w, h) in enumerate(zip(want + [""] * len(have),
                                                                 have + [""] * len(want)))
                        if w != h][:3]
                failures.append("%s: %s differs: %s" % (what, path, diff))
    if bad:
        failures.append("%s: %d of %d files differ" % (what, bad, len(paths)))
    return len(paths) - bad


# --- models made here -----------------------------------------------------------------

def typed_tensor(name, dtype, values, dims):
    return helper.make_tensor(name, dtype, dims, values, raw=False)


def make_rich_model():
    rng = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float32), "w_f32_raw"),
        numpy_helper.from_array(np.arange(5, dtype=np.int64) - 2, "w_i64_raw"),
        numpy_helper.from_array(np.array([[True, False]]), "w_bool_raw"),
        numpy_helper.from_array(np.arange(7, dtype=np.float16), "w_f16_raw"),
        numpy_helper.from_array(np.arange(3, dtype=np.uint64) + (1 << 63), "w_u64_raw"),
        numpy_helper.from_array(np.zeros((0, 4), dtype=np.float32), "w_empty"),
        numpy_helper.from_array(np.array(3.5, dtype=np.float64), "w_scalar"),
        numpy_helper.from_array(np.ones((1,) * 9, dtype=np.float32), "w_rank9"),
        typed_tensor("t_f32", TensorProto.FLOAT, [1.5, -2.0, 3.25], [3]),
        typed_tensor("t_i32", TensorProto.INT32, [-(1 << 31), 0, (1 << 31) - 1], [3]),
        typed_tensor("t_i8", TensorProto.INT8, [-128, 5, 127], [3]),
        typed_tensor("t_u8", TensorProto.UINT8, [0, 200, 255], [3]),
        typed_tensor("t_i16", TensorProto.INT16, [-32768, 1, 32767], [3]),
        typed_tensor("t_u16", TensorProto.UINT16, [0, 65535, 2], [3]),
        typed_tensor("t_bool", TensorProto.BOOL, [True, False, True, True], [2, 2]),
        typed_tensor("t_f16", TensorProto.FLOAT16, np.array([0.5, -1.0, 65504.0], np.float16), [3]),
        typed_tensor("t_bf16", TensorProto.BFLOAT16, [1.0, -2.5, 3.0e38], [3]),
        typed_tensor("t_i64", TensorProto.INT64, [-(1 << 63), 1, (1 << 63) - 1], [3]),
        typed_tensor("t_f64", TensorProto.DOUBLE, [1e300, -0.0], [2]),
        typed_tensor("t_u32", TensorProto.UINT32, [0, (1 << 32) - 1], [2]),
        typed_tensor("t_u64", TensorProto.UINT64, [0, (1 << 64) - 1], [2]),
        typed_tensor("t_str", TensorProto.STRING, [b"ab", b"\xff\x00"], [2]),
        typed_tensor("t_c64", TensorProto.COMPLEX64, [1 + 2j], [1]),
    ]
    then_graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["then_out"])], "then",
        [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)])
    else_graph = helper.make_graph(
        [helper.make_node("Constant", [], ["else_out"],
                          value=numpy_helper.from_array(np.ones((2, 2), np.float32)))],
        "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2, 2])])
    nodes = [
        helper.make_node("Conv", ["x", "w_f32_raw", ""], ["y"], name="conv/1",
                         kernel_shape=[3, 3], pads=[1, -1, 0, 1 << 40], group=2,
                         alpha=0.1, auto_pad="SAME_UPPER", scales=[0.5, -1e-30, float("inf")],
                         modes=["a", "b c", "\u00e9"], payload=b"\x00\x01\xfe"),
        helper.make_node("If", ["cond"], ["z"], name="branch",
                         then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Custom", ["y"], ["u"], domain="my.domain",
                         tensors=[numpy_helper.from_array(np.arange(3, dtype=np.int32))]),
    ]
    graph = helper.make_graph(
        nodes, "rich graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, None, "h w"]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 2])],
        initializer=inits,
        value_info=[helper.make_tensor_value_info("u", TensorProto.INT64, [1])])
    model = helper.make_model(graph, producer_name="etrt test",
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("my.domain", 2)])
    return model


def make_external_model():
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((64, 33)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.integers(-9, 9, (17,)).astype(np.int64), "b1"),
             numpy_helper.from_array(rng.integers(0, 255, (13,)).astype(np.uint8), "u1")]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["y"]),
             helper.make_node("Constant", [], ["c"],
                              value=numpy_helper.from_array(np.arange(40, dtype=np.float32)))]
    graph = helper.make_graph(nodes, "ext", [helper.make_tensor_value_info("x", 1, [1, 64])],
                              [helper.make_tensor_value_info("y", 1, [1, 33])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def check_made_models(tmp):
    expected = {}
    rich = os.path.join(tmp, "rich.onnx")
    onnx.save_model(make_rich_model(), rich)
    expected[rich] = model_lines(rich)

    for one_file in (True, False):
        folder = os.path.join(tmp, "ext_one" if one_file else "ext_many")
        os.makedirs(folder)
        path = os.path.join(folder, "model.onnx")
        onnx.save_model(make_external_model(), path, save_as_external_data=True,
                        all_tensors_to_one_file=one_file, location="weights.bin",
                        size_threshold=0, convert_attribute=True)
        m = onnx.load(path, load_external_data=False)
        external = [t for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL]
        if len(external) != 3:
            failures.append("external data: expected 3 external initializers, got %d" % len(external))
        expected[path] = model_lines(path)

    # A location that escapes the folder must be refused.
    path = os.path.join(tmp, "ext_one", "model.onnx")
    m = onnx.load(path, load_external_data=False)
    for entry in m.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = "../ext_many/w1"
    bad = os.path.join(tmp, "ext_one", "escape.onnx")
    onnx.save_model(m, bad)
    got = probe([bad])[bad]
    if len(got) != 2 or not got[1].startswith("error=invalid format") or "leaves the model's folder" not in got[1]:
        failures.append("escaping external data not refused: %s" % got)

    good = compare(expected, "made models")
    print("made models: %d of %d read as onnx reads them" % (good, len(expected)))


def check_pb_round_trip(tmp):
    arrays = {
        "f32": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
        "u8": np.arange(6, dtype=np.uint8), "i8": np.arange(-3, 3, dtype=np.int8),
        "u16": np.array([0, 65535], np.uint16), "i16": np.array([-5, 5], np.int16),
        "i32": np.array([[1], [-1]], np.int32), "i64": np.array([1 << 40], np.int64),
        "bool": np.array([True, False]), "f16": np.array([1.5, -0.25], np.float16),
        "f64": np.array(2.5, np.float64), "u32": np.array([4000000000], np.uint32),
        "u64": np.array([1 << 63], np.uint64), "rank8": np.ones((1, 2, 1, 2, 1, 2, 1, 2), np.float32),
    }
    expected = {}
    for name, array in arrays.items():
        path = os.path.join(tmp, name + ".pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(array, "in_" + name).SerializeToString())
        expected[path] = pb_lines(path)
        # etrt reads it, writes it back; onnx must read the same array.
        out = os.path.join(tmp, name + ".out.pb")
        subprocess.run([PROBE, "--write", path, out], check=True)
        t = TensorProto()
        with open(out, "rb") as f:
            t.ParseFromString(f.read())
        back = numpy_helper.to_array(t)
        if t.name != "in_" + name or back.dtype != array.dtype or back.shape != array.shape or \
                back.tobytes() != array.tobytes():
            failures.append("round trip of %s: got %s %s %s" % (name, t.name, back.dtype, back.shape))
    # Typed-field tensors (as older exporters write them) read the same as raw ones.
    typed = os.path.join(tmp, "typed.pb")
    with open(typed, "wb") as f:
        f.write(helper.make_tensor("typed", TensorProto.FLOAT16, [2], np.array([1, 2], np.float16)).SerializeToString())
    expected[typed] = pb_lines(typed)
    text = os.path.join(tmp, "text.pb")
    with open(text, "wb") as f:
        f.write(helper.make_tensor("s", TensorProto.STRING, [1], [b"x"]).SerializeToString())
    expected[text] = pb_lines(text)
    good = compare(expected, "made .pb files")
    print(".pb files made here: %d of %d read as onnx reads them; %d written back" % (
        good, len(expected), len(arrays)))


def check_testdata():
    if not os.path.isdir(TESTDATA):
        print("skipped the backend test data: %s is absent" % TESTDATA)
        return
    expected = {}
    for root, dirs, files in sorted(os.walk(TESTDATA)):
        dirs.sort()
        if "model.onnx" not in files:
            continue
        path = os.path.join(root, "model.onnx")
        expected[path] = model_lines(path)
        graph = onnx.load(path).graph
        init_names = {t.name for t in graph.initializer}
        inputs = [vi for vi in graph.input if vi.name not in init_names]
        for sub in sorted(dirs):
            folder = os.path.join(root, sub)
            for name in sorted(os.listdir(folder)):
                if not name.endswith(".pb"):
                    continue
                kind, index = name[:-3].split("_")
                infos = inputs if kind == "input" else list(graph.output)
                vi = infos[int(index)]
                is_tensor = vi.type.WhichOneof("value") == "tensor_type"
                pb = os.path.join(folder, name)
                expected[pb] = pb_lines(pb, is_tensor)
    models = sum(1 for p in expected if p.endswith(".onnx"))
    good = compare(expected, "backend test data")
    print("backend test data: %d of %d files (%d models) read as onnx reads them" % (
        good, len(expected), models))


def main():
    if not os.access(PROBE, os.X_OK):
        print("the probe %s is not built" % PROBE)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        check_made_models(tmp)
        check_pb_round_trip(tmp)
    check_testdata()
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
