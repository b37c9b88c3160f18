"""What pyproject.toml declares is true of the tree: the version is written once (in
sgcompiler/__init__.py), the license is MIT with its text in LICENSE, and the sdist
carries what the tests need."""
import pathlib
import re

import pytest

import sgcompiler

ROOT = pathlib.Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib")      # Python 3.11 and later
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_version_is_written_once():
    assert "version" not in PROJECT["project"]
    assert "version" in PROJECT["project"]["dynamic"]
    assert PROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sgcompiler.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", sgcompiler.__version__)


def test_the_license_is_mit_and_shipped():
    assert PROJECT["project"]["license"] == "MIT"
    assert PROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the sgcompiler authors" in text


def test_the_test_extra_runs_the_scipy_tests():
    assert any(re.match(r"scipy\b", req) for req in PROJECT["project"]["optional-dependencies"]["test"])


def test_the_numba_backend_is_an_extra_that_ci_installs():
    extras = PROJECT["project"]["optional-dependencies"]
    assert any(re.match(r"numba\b", req) for req in extras["jit"])
    assert any(re.match(r"numba\b", req) for req in extras["test"])
    assert not any("numba" in req for req in PROJECT["project"]["dependencies"])


def test_the_sdist_carries_what_the_tests_read():
    manifest = (ROOT / "MANIFEST.in").read_text().split()
    for folder in ("tests", "samples", "benchmarks", "docs"):
        assert folder in manifest, f"MANIFEST.in does not graft {folder}/"


def test_the_test_extra_runs_the_dask_tests():
    extras = PROJECT["project"]["optional-dependencies"]
    for extra in ("test", "dask"):
        assert any(re.match(r"dask\[array\]", req) for req in extras[extra]), extra
        assert any(re.match(r"distributed\b", req) for req in extras[extra]), extra
