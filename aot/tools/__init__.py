"""The audit tools: what ``aot inspect``, ``aot verify`` and ``aot clean`` do, without the printing.

    sel = locate.select("fixtures/numkit")      # the images a PATH stands for, read and checked
    verify.verify_sources(sel).stale            → [] when every entry holds against the sources as they are
    inspect.inspect_json(sel)["images"][0]["entries"][0]["method"]   → "numkit.core:absdiff"
    showcode.show_code(sel, "numkit.stats:mean(f64[:])", "llvm")     → "; ModuleID = …"  (from the stored IR)
    clean.clean("fixtures/numkit")              → the removed files
    report.format_verify(...)                   → the text ``aot verify`` prints

One job per module: ``errors`` (AuditError), ``locate`` (PATH → images and project), ``audited`` (an image
read and checked for tools), ``verify`` (entries against the current sources), ``importcheck`` and
``importcheck_child`` (a strict import in a fresh interpreter), ``inspect`` (the JSON listing),
``showcode`` (IR, LLVM IR, assembly or PTX of an entry), ``ptxtext`` (functions of a PTX module),
``clean``, ``report`` (the text of the tables and reports). Nothing is imported here: the import check's
child runs as ``python -m aot.tools.importcheck_child`` and must import nothing but ``aot``.
"""
