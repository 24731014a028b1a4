"""`etrt inspect`: the JSON contract on ExecuTorch's own programs, the human summary,
and bad input (exit status 2, nothing on standard output)."""
import json
import os
import subprocess
import sys
import tempfile

ETRT = os.environ.get("ETRT_BIN", "build/bin/etrt")
FIXTURES = os.environ.get("ETRT_FIXTURES_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def run(*args):
    return subprocess.run([ETRT, *args], capture_output=True, timeout=60)


def inspect_json(name):
    r = run("inspect", "--json", os.path.join(FIXTURES, "pte", name))
    check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr.decode()}")
    text = r.stdout.decode("utf-8")
    check(text.count("\n") == 1 and text.endswith("\n"), f"{name}: one line of JSON")
    return json.loads(text)


def test_add():
    d = inspect_json("add.pte")
    check(d["file_identifier"] == "ET12", "add: identifier")
    check(d["extended_header"] is None, "add: no extended header")
    check(d["version"] == 0, "add: version")
    check(d["segments"] == [{"offset": 0, "size": 0}], f"add: segments {d['segments']}")
    check(d["named_data"] == [], "add: named_data")
    check(len(d["methods"]) == 1, "add: one method")
    m = d["methods"][0]
    check(m["name"] == "forward", "add: method name")
    check(m["num_values"] == 4, "add: num_values")
    check(m["inputs"] == [0, 1] and m["outputs"] == [2], f"add: inputs/outputs {m['inputs']} {m['outputs']}")
    for t in m["input_tensors"] + m["output_tensors"]:
        check(t == {"dtype": "float32", "sizes": [1], "device": "cpu"}, f"add: io tensor {t}")
    check([t["index"] for t in m["tensors"]] == [0, 1, 2], "add: tensor indices")
    check(m["operators"] == ["aten::add.out"], f"add: operators {m['operators']}")
    check(len(m["instructions"]) == 1, "add: one instruction")
    i = m["instructions"][0]
    check(i["kind"] == "kernel" and i["op"] == "aten::add.out" and i["args"] == [0, 1, 3, 2, 2], f"add: instruction {i}")
    check(m["delegates"] == [], "add: delegates")
    check(m["non_const_buffer_sizes"] == [0, 48], "add: buffer sizes")
    check(m["non_const_buffer_device"] == [], "add: buffer devices")


def test_linear():
    d = inspect_json("linear_inline_constants.pte")
    check(d["segments"] == [], "linear: no segments")
    m = d["methods"][0]
    check([i["op"] for i in m["instructions"]] == ["aten::mul.out", "aten::add.out"], f"linear: ops {m['instructions']}")
    check(all(i["kind"] == "kernel" for i in m["instructions"]), "linear: kernel calls")
    check(m["input_tensors"] == [{"dtype": "float32", "sizes": [2, 2], "device": "cpu"}], "linear: input tensor")
    check(len(m["tensors"]) == 5, "linear: five tensors")


def test_summary():
    r = run("inspect", os.path.join(FIXTURES, "pte", "linear_inline_constants.pte"))
    out = r.stdout.decode()
    check(r.returncode == 0, "summary: exit 0")
    check("method 'forward'" in out and "aten::mul.out" in out and "aten::add.out" in out, f"summary: {out}")
    r = run("inspect", "--help")
    check(r.returncode == 0 and b"usage: etrt inspect" in r.stdout, "inspect --help")


def test_bad_input():
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "not_a_program.pte": b"hello, this is not a program at all",
            "bundled.pte": b"\x10\x00\x00\x00BP08" + b"\x00" * 24,
            "empty.pte": b"",
        }
        add = open(os.path.join(FIXTURES, "pte", "add.pte"), "rb").read()
        cases["truncated.pte"] = add[:600]
        for name, data in cases.items():
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            for args in (["inspect", "--json", path], ["inspect", path]):
                r = run(*args)
                check(r.returncode == 2, f"{name} {args[1]}: exit {r.returncode}")
                check(r.stdout == b"", f"{name}: nothing on stdout")
                check(len(r.stderr) > 0, f"{name}: a message on stderr")
        r = run("inspect", "--json", os.path.join(tmp, "bundled.pte"))
        check(b"bundled program" in r.stderr, f"bundled: {r.stderr}")
        r = run("inspect", "--json", os.path.join(tmp, "missing.pte"))
        check(r.returncode == 2 and r.stdout == b"", "missing file: exit 2")
        for args in (["inspect"], ["inspect", "--bogus", "x"], ["inspect", "a", "b"]):
            r = run(*args)
            check(r.returncode == 2 and r.stdout == b"", f"usage {args}: exit 2, nothing on stdout")


for test in (test_add, test_linear, test_summary, test_bad_input):
    before = len(failures)
    test()
    print("ok  " if len(failures) == before else "FAIL", test.__name__)
sys.exit(1 if failures else 0)
