import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import fuzz_session  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.py from the current compiler output")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")


def pytest_report_header(config):
    return fuzz_session.summary()[0]


def pytest_terminal_summary(terminalreporter):
    terminalreporter.section("fuzzers: this run's seed, and what went unchecked")
    for line in fuzz_session.summary():
        terminalreporter.write_line(line)
