"""Run the corpus: how much real-style numeric code aot compiles and gets right.

    python3 tests/corpus/run.py                  # the table, the total and the blockers
    python3 tests/corpus/run.py finance econ     # some modules only
    python3 tests/corpus/run.py --json out.json  # also write every entry's result
    python3 tests/corpus/run.py --update-expected  # rewrite expected_ok.txt from this run
    python3 tests/corpus/run.py --aot ../other    # measure the aot of another checkout (a merge, a branch)

Every module of the corpus runs in a child process of its own (``--child``), which reports each entry as it
starts and as it ends; when a child dies (a crash in native code) or hangs, the entry it was running is a
``crash`` and the entries it had not reached run in a fresh child, so one crash hides nothing else.  What each
entry's status means is in ``harness.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)
EXPECTED = os.path.join(HERE, "expected_ok.txt")
MARK = "@@corpus "
CHILD_TIMEOUT = 120.0
# The aot checkout the children import (``--aot``; default: the one this file belongs to).
AOT_ENV = "AOT_CORPUS_AOT"

# Files of this folder that are not corpus modules.
NOT_MODULES = {"harness.py", "run.py"}


def corpus_modules(folder=HERE):
    return sorted(
        f[:-3] for f in os.listdir(folder) if f.endswith(".py") and f not in NOT_MODULES and not f.startswith("_")
    )


# ------------------------------------------------------------------------------------------ the child


def _emit(**record):
    sys.stdout.write(MARK + json.dumps(record) + "\n")
    sys.stdout.flush()


def child(folder, module_name, only):
    """Judge the entries of one module (those named in ``only``, or all), reporting each as it goes."""
    for path in (_aot_root(), TESTS, HERE, folder):
        if path not in sys.path:
            sys.path.insert(0, path)
    import importlib

    import harness

    module = importlib.import_module(module_name)
    tolerance = getattr(module, "TOLERANCE", {})
    for name, method, cases in harness.entries(module):
        qualname = f"{module_name}.{name}"
        if only and qualname not in only:
            continue
        _emit(event="start", name=qualname)
        t0 = time.perf_counter()
        status, message, ncases, error = harness.judge(qualname, method, cases, tolerance.get(name, harness.REL_TOL))
        _emit(
            event="end",
            name=qualname,
            status=status,
            message=message,
            cases=ncases,
            seconds=round(time.perf_counter() - t0, 3),
            category=harness.blocker(error)[0] if error else None,
            what=harness.blocker(error)[1] if error else None,
            all_blockers=harness.all_blockers(error) if error else [],
        )


# ------------------------------------------------------------------------------------------ the parent


def _aot_root():
    return os.environ.get(AOT_ENV) or ROOT


def _run_child(folder, module_name, only):
    """Run a child for ``module_name``: (finished records, the entry it died in or None, why it died or '')."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--folder", folder, module_name, *only]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.setdefault("AOT_VERIFY_PASSES", "1")
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
        out, err, died = proc.stdout, proc.stderr, proc.returncode != 0
        why = f"the process ended with status {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        died, why = True, f"no result within {CHILD_TIMEOUT:.0f} s"
    records, started = {}, None
    for line in out.splitlines():
        if not line.startswith(MARK):
            continue
        rec = json.loads(line[len(MARK) :])
        if rec["event"] == "start":
            started = rec["name"]
        else:
            del rec["event"]
            records[rec["name"]] = rec
            started = None
    if not died:
        return records, None, ""
    tail = [ln for ln in err.strip().splitlines() if ln.strip()]
    detail = why + (f": {tail[-1].strip()}" if tail else "")
    return records, started, detail


def _crash(name, detail):
    return {
        "name": name,
        "status": "crash",
        "message": detail,
        "cases": 0,
        "category": None,
        "what": None,
        "all_blockers": [],
    }


def run_module(module_name, folder=HERE):
    """All entries of one module, each judged once, in child processes (a new one after each crash)."""
    results, only = {}, []
    while True:
        records, died_in, detail = _run_child(folder, module_name, only)
        results.update(records)
        if died_in is None and not detail:
            return list(results.values())
        if died_in is None:  # died before any entry started (an import error of the module): nothing more
            results[module_name] = _crash(module_name, detail)
            return list(results.values())
        results[died_in] = _crash(died_in, detail)
        # The entries this child had not reached: learn them from a child that lists them, then go on.
        names = _entry_names(folder, module_name)
        only = [n for n in names if n not in results]
        if not only:
            return [results[n] for n in names if n in results]


def _entry_names(folder, module_name):
    code = (
        "import sys, importlib; sys.path[:0] = sys.argv[1:5]; import harness; "
        "m = importlib.import_module(sys.argv[5]); "
        "print('\\n'.join(sys.argv[5] + '.' + n for n, _, _ in harness.entries(m)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, _aot_root(), TESTS, HERE, folder, module_name],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    return out.split()


# ------------------------------------------------------------------------------------------ report


def run_all(modules=None, folder=HERE):
    """Every entry of the named modules of ``folder`` (default: all of them), each as a record (a dict: name,
    status, message, cases, and for a compile error its blocker's category and what)."""
    rows = []
    for m in modules or corpus_modules(folder):
        rows.extend(run_module(m, folder))
    return rows


def report(rows, out=sys.stdout):
    counted = [r for r in rows if r["status"] != "skipped"]
    ok = sum(r["status"] == "ok" for r in counted)
    width = max([len(r["name"]) for r in rows] + [4])
    out.write(f"{'name':<{width}}  {'status':<13}  first error\n")
    for r in rows:
        message = r["message"] if len(r["message"]) <= 150 else r["message"][:147] + "..."
        out.write(f"{r['name']:<{width}}  {r['status']:<13}  {message}\n")
    out.write("\n")
    by_status = {}
    for r in rows:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    out.write("status: " + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items())) + "\n")
    share = 100.0 * ok / len(counted) if counted else 0.0
    out.write(f"{ok} of {len(counted)} compiled and correct ({share:.1f} %)")
    skipped = len(rows) - len(counted)
    out.write(f"; {skipped} skipped\n" if skipped else "\n")
    blockers = {}
    for r in counted:
        if r["status"] == "compile-error":
            blockers.setdefault(r["category"], []).append(r["what"])
    if blockers:
        out.write("\nblockers (the first compile error of each entry, by category):\n")
        for c, whats in sorted(blockers.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            names = sorted({w for w in whats if w})
            out.write(f"  {len(whats):3d}  {c}" + (f" ({', '.join(names)})" if names else "") + "\n")
    every = {}
    for r in counted:
        for c, _ in {tuple(b) for b in r.get("all_blockers", [])}:
            every.setdefault(c, set()).add(r["name"])
    if every:
        out.write("\nentries blocked by each category (any error in the message, not only the first):\n")
        for c, names in sorted(every.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out.write(f"  {len(names):3d}  {c}\n")
    others = [r for r in counted if r["status"] in ("wrong", "crash")]
    if others:
        out.write(f"\nwrong or crashed: {len(others)} (see the table)\n")


def read_expected():
    if not os.path.exists(EXPECTED):
        return []
    with open(EXPECTED, encoding="utf-8") as fh:
        return [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]


def write_expected(rows):
    names = sorted(r["name"] for r in rows if r["status"] == "ok")
    with open(EXPECTED, "w", encoding="utf-8") as fh:
        fh.write("# Corpus entries that compile and match plain Python (tests/test_corpus.py keeps them so).\n")
        fh.write("# Rewrite with: python3 tests/corpus/run.py --update-expected\n")
        fh.writelines(n + "\n" for n in names)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="corpus modules to run (default: all)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", default=HERE, help="the corpus folder (default: the one beside this file)")
    parser.add_argument("--aot", metavar="ROOT", help="measure the aot of this checkout (default: this file's)")
    parser.add_argument("--json", metavar="PATH", help="write every entry's result as JSON")
    parser.add_argument("--update-expected", action="store_true", help="rewrite expected_ok.txt from this run")
    args = parser.parse_args(argv)
    if args.child:
        child(os.path.abspath(args.folder), args.modules[0], set(args.modules[1:]))
        return 0
    folder = os.path.abspath(args.folder)
    if args.update_expected and (args.modules or folder != HERE or args.aot):
        parser.error("--update-expected needs the whole corpus and this checkout's aot (no modules, --folder, --aot)")
    if args.aot:
        os.environ[AOT_ENV] = os.path.abspath(args.aot)
    t0 = time.perf_counter()
    modules = args.modules or corpus_modules(folder)
    rows = run_all(modules, folder)
    report(rows)
    print(f"\n{len(modules)} modules in {time.perf_counter() - t0:.1f} s, aot from {_aot_root()}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    if args.update_expected:
        write_expected(rows)
        print(f"wrote {os.path.relpath(EXPECTED, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
