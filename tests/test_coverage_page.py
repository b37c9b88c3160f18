"""docs/numpy-coverage.md is the output of `python -m sgcompiler.coverage`, and is linked."""
import pathlib
import re

import pytest

from sgcompiler import coverage, rules

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "numpy-coverage.md"


def test_coverage_page_is_current():
    committed = PAGE.read_text()
    if coverage.versions() not in committed:
        pytest.skip(f"the page was generated with other library versions than "
                    f"{coverage.versions()}")
    assert committed == coverage.page(), ("docs/numpy-coverage.md is stale; run "
                                          "python -m sgcompiler.coverage > "
                                          "docs/numpy-coverage.md")


def test_every_rule_has_a_row():
    text = coverage.page()
    missing = [r.name for r in rules.all_rules() if f"| `{r.name}` |" not in text]
    assert not missing


def test_readme_links_the_coverage_page():
    assert "(docs/numpy-coverage.md)" in (ROOT / "README.md").read_text()


def test_readme_counts_the_rules_the_page_counts():
    page = re.search(r"\*\*(\d+) functions have derivative rules\*\*", PAGE.read_text())
    readme = re.search(r"(\d+) NumPy, SciPy and Python functions have derivative rules",
                       (ROOT / "README.md").read_text())
    assert page and readme and page.group(1) == readme.group(1), (page, readme)
