"""The image, pure Python: its header and gate (``header``), its entries as the first call reads them
(``entries``), the whole image as builds write it and tools read it (``contents``; the tools check it
through ``aot.tools.audited``).

Nothing is imported here: a package's first call imports ``header`` and ``entries`` only."""
