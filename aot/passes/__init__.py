"""IR → IR passes, one module each; ``pipeline`` is their order (analyses live in ``aot.analysis``)."""
