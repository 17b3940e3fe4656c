"""Shared test setup: see ``fixture_copies`` (numkit is imported from a private copy without images)."""
import fixture_copies  # noqa: F401
