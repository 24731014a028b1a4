"""Where the tests find etrt: an installed package, or a build tree's extension named by
ETRT_PYTHON_BUILD with the package sources of this checkout (make test-python sets it).
ETRT_TOOL names the etrt command line (default: the build tree's, then PATH)."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get("ETRT_PYTHON_BUILD"):
    sys.path.insert(0, os.path.join(ROOT, "python"))


def _tool():
    explicit = os.environ.get("ETRT_TOOL")
    if explicit:
        return explicit
    build = os.environ.get("ETRT_PYTHON_BUILD")
    if build:
        candidate = os.path.join(os.path.dirname(os.path.dirname(build)), "bin", "etrt")
        if os.path.exists(candidate):
            return candidate
    return shutil.which("etrt")


@pytest.fixture(scope="session")
def etrt_tool():
    tool = _tool()
    if tool is None:
        pytest.fail("no etrt command line: set ETRT_TOOL or ETRT_PYTHON_BUILD")
    return tool


@pytest.fixture(scope="session")
def run_tool(etrt_tool):
    def run(*args, check=True):
        result = subprocess.run([etrt_tool, *map(str, args)], capture_output=True, text=True)
        if check and result.returncode != 0:
            raise AssertionError("etrt %s failed (%d): %s%s" % (
                " ".join(map(str, args)), result.returncode, result.stdout, result.stderr))
        return result

    return run


@pytest.fixture(scope="session")
def testdata():
    return os.path.join(ROOT, "tests", "data")
