"""Shared test setup: see ``fixture_copies`` (numkit is imported from a private copy without images).

Three things hold for the whole suite: every intrinsic's descriptor must be used by some test of a whole run
(``intrinsic_coverage``), and two switches: the runtime runs the IR verifier after every pass of the pipeline
(``AOT_VERIFY_PASSES=1``, set before any runtime reads its environment), and ``--update-goldens`` is the only
way golden files get written (``goldens.py``).
"""

import os

import pytest

import fixture_copies  # noqa: F401
import intrinsic_coverage
from goldens import GOLDEN, UPDATE_FLAG, check_golden

os.environ.setdefault("AOT_VERIFY_PASSES", "1")
intrinsic_coverage.record()


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


def pytest_sessionfinish(session, exitstatus):
    """A whole run that passed fails if some intrinsic's descriptor was never used (``intrinsic_coverage``)."""
    if exitstatus != 0 or not intrinsic_coverage.whole_run(session.config):
        return
    unused = intrinsic_coverage.unused()
    if unused:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"no test types or lowers these intrinsics: {', '.join(unused)}", red=True)
        session.exitstatus = 1
