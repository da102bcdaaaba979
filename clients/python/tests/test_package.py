"""The package's layout: the generated stubs are found from a source
checkout, from $SWITCHYARD_GEN_PYTHON, or inside an installed wheel."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import switchyard

PKG_ROOT = Path(__file__).resolve().parents[1]   # clients/python
REPO = PKG_ROOT.parents[1]
GEN = REPO / "gen" / "python"

PROBE = ("import switchyard, switchyard.v1.router_pb2 as r, switchyard.ray; "
         "print(r.__file__); print(len(switchyard.__path__))")


def python(code, cwd, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SWITCHYARD_GEN_PYTHON")}
    clean.update(env)
    return subprocess.run([sys.executable, "-c", code], cwd=str(cwd), env=clean, capture_output=True, text=True)


def test_source_checkout_extends_path_to_gen():
    import switchyard.v1.router_pb2 as r
    assert Path(r.__file__).resolve().parent == (GEN / "switchyard" / "v1").resolve()
    assert [Path(p).resolve() for p in switchyard.__path__] == [(PKG_ROOT / "switchyard").resolve(),
                                                                (GEN / "switchyard").resolve()]


def test_env_var_names_the_stubs(tmp_path):
    shutil.copytree(PKG_ROOT / "switchyard", tmp_path / "pkg" / "switchyard")
    shutil.copytree(GEN, tmp_path / "elsewhere" / "gen" / "python")
    out = python(PROBE, tmp_path, PYTHONPATH=str(tmp_path / "pkg"),
                 SWITCHYARD_GEN_PYTHON=str(tmp_path / "elsewhere" / "gen" / "python"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0].startswith(str(tmp_path / "elsewhere"))

    missing = python(PROBE, tmp_path, PYTHONPATH=str(tmp_path / "pkg"))
    assert missing.returncode != 0 and "SWITCHYARD_GEN_PYTHON" in missing.stderr


@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("pip", "setuptools", "wheel")),
                    reason="needs Debian's python3-pip, python3-setuptools and python3-wheel to build a wheel")
def test_wheel_carries_the_stubs(tmp_path):
    # Build from a copy with the repository's relative layout, so the source
    # tree is left untouched.
    src = tmp_path / "src"
    shutil.copytree(PKG_ROOT, src / "clients" / "python", ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    shutil.copytree(GEN, src / "gen" / "python")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    built = subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"),
                                  str(src / "clients" / "python")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("switchyard-*.whl"))
    installed = subprocess.run(pip + ["install", "--no-deps", "--no-index", "--target", str(tmp_path / "site"),
                                      str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    out = python(PROBE, tmp_path, PYTHONPATH=str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    stub_file, path_entries = out.stdout.split()
    assert stub_file.startswith(str(tmp_path / "site" / "switchyard" / "v1")) and path_entries == "1"
