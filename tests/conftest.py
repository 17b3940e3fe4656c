"""Shared test setup: see ``fixture_copies`` (numkit is imported from a private copy without images).

The runtime runs the IR verifier after every pass of the pipeline throughout the suite
(``AOT_VERIFY_PASSES=1``, set before any runtime reads its environment).
"""
import os

import fixture_copies  # noqa: F401

os.environ.setdefault("AOT_VERIFY_PASSES", "1")
