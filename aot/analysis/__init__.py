"""Analyses of typed IR: they compute facts about a function and never rewrite it.

    maybe_unassigned(fn)   → frozenset({'last'})          (definite: reads that need an UnboundLocalError check)
    loop_versions(fn)      → (LoopVersion(header='bb2', checks=(n <= 3037000500,), facts={…}),)   (ranges)

Code generation asks for them; passes (``aot.passes``) are the IR → IR rewrites.
"""
