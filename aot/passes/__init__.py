"""IR → IR passes (one module each) and analyses; ``pipeline`` is their order."""
