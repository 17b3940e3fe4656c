"""Method definitions and fingerprints (aot.world.fingerprint): what changes them and what does not.

The end-to-end scenarios (edits to files, images reused or rejected) are in test_world.py; these check the
encoding itself, in this process and, for the hash seed, in fresh ones."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from aot.world.fingerprint import definition, fingerprint, fingerprint_of
from aot.world.methods import MethodOptions


def make(source: str, name: str = "f", filename: str = "<mod>"):
    """The function ``name`` defined by ``source`` (compiled as a module of its own)."""
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), filename, "exec"), namespace)
    return namespace[name]


BASE = """
def f(x, k=2):
    return x * 1.5 + k
"""


def test_same_source_same_definition_and_fingerprint():
    a, b = make(BASE), make(BASE)
    assert definition(a) == definition(b)
    assert fingerprint(a) == fingerprint(b) == fingerprint_of(definition(a))
    assert len(fingerprint(a)) == 32 and int(fingerprint(a), 16) >= 0


def test_lines_comments_docstrings_and_file_names_change_nothing():
    moved = "\n\n# a comment\n\n" + BASE.replace("return", "# why\n    return")
    documented = BASE.replace("def f(x, k=2):\n", 'def f(x, k=2):\n    """Scale x."""\n')
    other_file = make(BASE, filename="/elsewhere/mod.py")
    assert definition(make(moved)) == definition(make(BASE))
    assert definition(make(documented)) == definition(make(BASE))
    assert definition(other_file) == definition(make(BASE))


def test_constants_are_exact_and_type_tagged():
    texts = {c: definition(make(BASE.replace("1.5", c))) for c in ("1.5", "1", "1.0", "True", "'1'", "-0.0", "0.0")}
    assert len(set(texts.values())) == len(texts), "1, 1.0, True, '1', -0.0 and 0.0 all differ"


def test_code_names_and_options_change_it():
    base = definition(make(BASE))
    assert definition(make(BASE.replace("x * 1.5", "x / 1.5"))) != base
    assert definition(make(BASE.replace("(x, k=2)", "(x, *, k=2)"))) != base  # a keyword-only parameter
    assert definition(make(BASE.replace("x", "y"))) != base  # a parameter's name (keywords bind by it)
    assert definition(make(BASE), MethodOptions(boundscheck=False)) != definition(make(BASE), MethodOptions())


def test_default_values_are_left_out():
    """A method's code never reads its defaults: compiled callers that fill one in record a ``default`` edge."""
    base = definition(make(BASE))
    assert definition(make(BASE.replace("k=2", "k=3"))) == base
    assert definition(make(BASE.replace("k=2", "k=2.0"))) == base


def test_keyword_defaults_in_any_order_are_the_same():
    a = make("def f(x, *, a=1, b=2):\n    return x + a + b\n")
    b = make("def f(x, *, a=1, b=2):\n    return x + a + b\n")
    b.__kwdefaults__ = {"b": 2, "a": 1}
    assert definition(a) == definition(b)


def test_nested_code_is_compared_without_its_lines():
    src = "def f(x):\n    g = lambda y: y + 1\n    return g(x)\n"
    assert definition(make(src)) == definition(make("\n\n" + src))
    assert definition(make(src)) != definition(make(src.replace("y + 1", "y + 2")))


def test_unusual_defaults_still_give_a_definition():
    f = make(BASE)
    f.__defaults__ = ([1, 2],)  # a list: not a constant marshal takes as it is
    assert definition(f) == definition(make(BASE)) and definition(f) == definition(f)


def test_frozenset_constants_do_not_depend_on_the_hash_seed():
    """`x in {"a", "b", "c"}` compiles to a frozenset constant, iterated in string-hash order."""
    program = textwrap.dedent("""
        from aot.world.fingerprint import definition
        ns = {}
        exec("def f(x):\\n    return x in {'alpha', 'beta', 'gamma', 'delta'}\\n", ns)
        print(definition(ns["f"]).hex())
    """)
    outputs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1
