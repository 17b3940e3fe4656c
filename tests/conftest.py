"""Shared test setup: see ``fixture_copies`` (numkit is imported from a private copy without images).

Two switches hold for the whole suite: the runtime runs the IR verifier after every pass of the pipeline
(``AOT_VERIFY_PASSES=1``, set before any runtime reads its environment), and ``--update-goldens`` is the only
way golden files get written (``goldens.py``).
"""

import os

import pytest

import fixture_copies  # noqa: F401
from goldens import GOLDEN, UPDATE_FLAG, check_golden

os.environ.setdefault("AOT_VERIFY_PASSES", "1")


def pytest_addoption(parser):
    parser.addoption(
        UPDATE_FLAG,
        action="store_true",
        default=False,
        help="rewrite the golden files under tests/golden/ from this run (review the diff)",
    )


@pytest.fixture
def golden(request):
    """``golden(name, text)``: ``text`` must equal ``tests/golden/<name>`` (written only with --update-goldens)."""
    update = request.config.getoption(UPDATE_FLAG)
    return lambda name, text: check_golden(GOLDEN / name, text, update)
