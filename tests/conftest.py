import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.py from the current compiler output")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
