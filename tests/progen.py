"""Random programs in aot's compiled subset, for differential testing against plain Python.

    >>> prog = generate(RandomChooser(random.Random(4)))
    >>> print(prog.source)          # abridged
    import math
    import aot

    def h0(f0):
        f1 = f0
        return (((-3) // 7) - (255 % (-65521)))

    @aot.jit
    def entry(f0, i1):
        i2 = h0(f0)
        if (i2 if f0 else i1) and (f0 != i1):
            raise ValueError("generated")
        ...
        w8 = 0
        while w8 < 14:
            w8 += 1
            ...
        return ...
    >>> prog.params, prog.ret
    (('float', 'int'), 'int')

Every program is a module with 0-2 module-level constants, 0-2 undecorated helpers (``h1`` calls ``h0``)
and one ``@aot.jit`` entry function. A helper's last parameters may have defaults (constants, or ``None``
for a float filled in by ``if f1 is None: f1 = …``) and be keyword-only; calls pass them by position, by
keyword in any order, as ``None``, or leave them out.  The generator keeps plain Python and the compiled subset in
agreement by construction, i.e. it avoids the documented differences of SUBSET.md:

* each local has one type for its whole life (names say it: ``i*`` int, ``f*`` float, ``b*`` bool,
  ``t*`` tuple, ``k*`` for-loop variable, ``w*`` while counter), and ``min``/``max``, conditional
  expressions and ``and``/``or`` only combine operands of one type (mixed int/float would unify to float);
* no int value ever leaves int64: every int expression carries a bound on its magnitude, operands are
  reduced with ``% m`` whenever an operation could exceed ``EXPR_LIMIT``, and every int stored in a
  variable, passed to a helper or returned stays within ``VAR_BOUND`` (inputs too);
* an int mixed with a float (arithmetic, comparison, ``float()``, ``/``) stays below 2**53, where the
  conversion is exact, so Python's exact int/float semantics and a conversion to f64 agree;
* a float is turned into an int only after clamping it to +-1e6 (NaN and, in one form, infinities get
  through, so ``ValueError``/``OverflowError`` still have to match);
* every loop is bounded (at most ``MAX_ITER`` iterations; nested loops and helper calls in loops are
  limited by a cost budget), so a program runs in milliseconds.

Loops run over ``range``, ``reversed(range)``, ``enumerate(range, start)``, ``zip`` of two ranges and
tuple displays (unrolled); conditions use ``in``/``not in`` on int tuple displays (a float NaN would be
found by identity in Python) and on ranges, and ``isinstance``; ints come from ``sum``/``min``/``max``/
``any``/``all`` over ranges too (``min``/``max`` of an empty range raise ``ValueError`` on both sides).

Everything else is fair game, including things that raise: int and float division by zero, math domain
and range errors (``sqrt log exp sin fmod``...), float ``**`` overflow, ``raise``/``assert``, NaN, signed
zeros and infinities through ``min``/``max``/``%``/``//``/comparisons/truthiness.

The generator draws all its decisions from a ``Chooser``: ``RandomChooser`` (a ``random.Random``) for
quick sweeps, ``HypothesisChooser`` (a Hypothesis ``draw``) for the property test, where smaller draws
mean simpler programs, so failures shrink to small sources.
"""

from __future__ import annotations

import ast
import math
import random
from dataclasses import dataclass

INT, FLOAT, BOOL = "int", "float", "bool"
SCALARS = (INT, FLOAT, BOOL)

INT64_MAX = 2**63 - 1
VAR_BOUND = 2**31  # |v| <= VAR_BOUND for every int variable, parameter, argument, return
EXPR_LIMIT = 2**62  # |v| <= EXPR_LIMIT for every int intermediate value
EXACT_FLOAT = 2**53  # ints that meet floats stay exactly representable as f64
MAX_ITER = 20  # iterations of one loop
CLAMP_BOUND = 2**20  # |int(clamped float)| <= 1e6 < 2**20

# Moduli used to pull an int back into range; |m| <= VAR_BOUND, nonzero, both signs.
VAR_MODULI = (1000003, 65521, -65537, 97, -101, 2**31 - 1, -(2**31) + 1, 7919)
SMALL_MODULI = (97, -101, 1009, 65521, -7919, 13)  # |m| <= 2**17, for ** 3 and shifts

INT_CONSTS = (0, 1, 2, 3, 5, 7, 10, -1, -3, -8, 100, 255, 12345, -9876543, 2**31 - 1, -(2**31), 2**40)
FLOAT_CONSTS = (
    "0.0",
    "1.0",
    "0.5",
    "-2.5",
    "3.0",
    "-0.0",
    "0.1",
    "1e-300",
    "1e300",
    "1e10",
    "-7.25",
    "math.pi",
    "math.e",
    "math.inf",
    "-math.inf",
    "math.nan",
    "2.0",
    "1e-3",
    "5e-324",
)
DIVISORS = (2, 3, -2, 7, -5, 1, -1, 97, 1000003, -65521)

SPECIAL_INTS = (0, 1, -1, 2, -2, 3, 7, -7, 10, 100, -100, 2**31, -(2**31), 2**31 - 1, 65536, -65537)
SPECIAL_FLOATS = (
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    3.5,
    -7.25,
    1e-300,
    -1e-300,
    5e-324,
    1e300,
    -1e300,
    1e10,
    700.0,
    710.0,
    math.pi,
    math.inf,
    -math.inf,
    math.nan,
)


# --------------------------------------------------------------------------------------------------
# Choosers


class Chooser:
    """Source of decisions; subclasses supply ``integer``.  Small values mean simple programs."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def pick(self, options):
        options = list(options)
        return options[self.integer(0, len(options) - 1)]

    def weighted(self, table):
        """``table``: list of (weight, value) with weight > 0; the first entries are the simple ones."""
        table = [(w, v) for w, v in table if w > 0]
        r = self.integer(0, sum(w for w, _ in table) - 1)
        for w, v in table:
            if r < w:
                return v
            r -= w
        raise AssertionError("unreachable")

    def chance(self, p: float) -> bool:
        """True with probability ``p``; the smallest draw gives False."""
        return self.integer(0, 999) >= round(1000 * (1 - p))


class RandomChooser(Chooser):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


class HypothesisChooser(Chooser):
    def __init__(self, draw):
        from hypothesis import strategies as st

        self._draw = draw
        self._st = st

    def integer(self, lo, hi):
        if lo == hi:
            return lo
        return self._draw(self._st.integers(lo, hi))


# --------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Expr:
    text: str
    type: object  # INT, FLOAT, BOOL, or a tuple of them
    bound: object = 0  # INT: max |value|; tuple: per-element bounds; else unused


@dataclass(frozen=True)
class Helper:
    name: str
    params: tuple
    ret: object
    cost: int  # loop iterations (weighted by callees) one call can cost
    names: tuple = ()  # the parameters' names
    defaults: tuple = ()  # per parameter: the default's text ("None": an optional float), or None (required)
    kwonly: int = 0  # how many of the last parameters are keyword-only


@dataclass(frozen=True)
class Program:
    source: str
    entry: str
    params: tuple  # parameter types of the entry, INT or FLOAT
    ret: object  # return type of the entry

    def __repr__(self):  # readable in Hypothesis' "Falsifying example"
        return f"Program(params={self.params!r}, ret={self.ret!r}, source=\n{self.source})"


def _neg(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _int_lit(v: int) -> str:
    return f"({v})" if v < 0 else str(v)


# --------------------------------------------------------------------------------------------------
# One function


class FunctionGen:
    def __init__(
        self,
        ch: Chooser,
        name: str,
        params: tuple,
        ret,
        callees: list,
        consts: dict,
        budget: int,
        max_depth: int,
        max_stmts: int,
        decorated: bool,
        defaults: tuple = (),
        kwonly: int = 0,
    ):
        self.ch = ch
        self.defaults = defaults or (None,) * len(params)
        self.kwonly = kwonly
        self.name = name
        self.ret = ret
        self.callees = callees
        self.consts = consts
        self.budget = budget
        self.max_depth = max_depth
        self.max_stmts = max_stmts
        self.decorated = decorated
        # visible name -> (type, bound).  An assignable int's bound is always VAR_BOUND, whatever was
        # stored first: a later assignment inside a loop reaches earlier reads on the next iteration.
        # Loop variables and counters (never assigned by the body) and tuple elements keep exact bounds.
        self.scope: dict[str, tuple] = {}
        self.protected: set[str] = set()  # loop variables and counters: never assigned
        self.counter = 0
        self.mult = 1  # loop iterations enclosing the current point
        self.cost = 1
        self.loops = 0  # enclosing loops (for break/continue)
        self.lines: list[str] = []
        self.indent = 1
        self.used_callees: set[str] = set()
        self.param_names = []
        for t in params:
            n = self.fresh(t)
            self.param_names.append(n)
            self.scope[n] = (t, VAR_BOUND if t == INT else 1)

    # -- helpers ---------------------------------------------------------------------------------
    def fresh(self, kind) -> str:
        prefix = {INT: "i", FLOAT: "f", BOOL: "b", "loop": "k", "counter": "w", "list": "l"}.get(kind, "t")
        name = f"{prefix}{self.counter}"
        self.counter += 1
        return name

    def emit(self, line: str):
        self.lines.append("    " * self.indent + line)

    def vars_of(self, t, assignable=False):
        return [n for n, (vt, _) in self.scope.items() if vt == t and not (assignable and n in self.protected)]

    def tuples(self):
        return [(n, vt, b) for n, (vt, b) in self.scope.items() if isinstance(vt, tuple)]

    def wrap(self, e: Expr, moduli=VAR_MODULI) -> Expr:
        m = self.ch.pick(moduli)
        return Expr(f"({e.text} % {_int_lit(m)})", INT, abs(m) - 1)

    def to_bound(self, e: Expr, bound: int, moduli=VAR_MODULI) -> Expr:
        """``e`` itself when |e| <= bound is known, else ``e % m`` with a modulus small enough."""
        if e.bound <= bound:
            return e
        fitting = [m for m in moduli if abs(m) - 1 <= bound] or [m for m in SMALL_MODULI if abs(m) - 1 <= bound]
        return self.wrap(e, fitting)

    def exact(self, e: Expr) -> Expr:
        return self.to_bound(e, EXACT_FLOAT)

    def callable_helpers(self, want=None):
        out = []
        for h in self.callees:
            if self.mult * (h.cost + 1) > self.budget:
                continue
            if want is None or h.ret == want or (isinstance(h.ret, tuple) and want in h.ret):
                out.append(h)
        return out

    def call_text(self, h: Helper, depth: int) -> str:
        self.used_callees.add(h.name)
        self.cost = max(self.cost, self.mult * (h.cost + 1))
        args, keywords = [], []
        by_keyword = False  # (once an argument is left out or passed by keyword, the rest follow by keyword)
        n = len(h.params)
        for i, t in enumerate(h.params):
            default = h.defaults[i] if h.defaults else None
            if default is not None and self.ch.chance(0.35):
                by_keyword = True  # left out: its default is used
                continue
            if default == "None" and self.ch.chance(0.3):
                text = "None"
            else:
                a = self.gen(t, max(depth - 1, 0))
                if t == INT:
                    a = self.to_bound(a, VAR_BOUND)
                text = a.text
            if by_keyword or i >= n - h.kwonly or (h.names and self.ch.chance(0.2)):
                by_keyword = True
                keywords.append(f"{h.names[i]}={text}")
            else:
                args.append(text)
        if len(keywords) > 1:  # keywords in any order (evaluated as written, as Python does)
            k = self.ch.integer(0, len(keywords) - 1)
            keywords = keywords[k:] + keywords[:k]
        return f"{h.name}({', '.join(args + keywords)})"

    # -- expressions -----------------------------------------------------------------------------
    def gen(self, t, depth: int) -> Expr:
        if t == INT:
            return self.gen_int(depth)
        if t == FLOAT:
            return self.gen_float(depth)
        if t == BOOL:
            return self.gen_bool(depth)
        raise AssertionError(t)

    def tuple_elems(self, t):
        out = []
        for n, vt, bounds in self.tuples():
            for k, et in enumerate(vt):
                if et == t:
                    out.append(Expr(f"{n}[{k}]", et, bounds[k]))
        for n, (vt, bounds) in self.consts.items():
            if isinstance(vt, tuple):
                for k, et in enumerate(vt):
                    if et == t:
                        out.append(Expr(f"{n}[{k}]", et, bounds[k]))
        return out

    def leaf(self, t) -> Expr:
        ch = self.ch
        vars_ = self.vars_of(t)
        consts = [n for n, (ct, _) in self.consts.items() if ct == t]
        elems = self.tuple_elems(t)
        kind = ch.weighted(
            [(6 if vars_ else 0, "var"), (3, "lit"), (1 if consts else 0, "const"), (1 if elems else 0, "elem")]
        )
        if kind == "var":
            n = ch.pick(vars_)
            return Expr(n, t, self.scope[n][1])
        if kind == "const":
            n = ch.pick(consts)
            return Expr(n, t, self.consts[n][1])
        if kind == "elem":
            return ch.pick(elems)
        if t == INT:
            v = ch.pick(INT_CONSTS)
            return Expr(_int_lit(v), INT, abs(v))
        if t == FLOAT:
            return Expr(_neg(ch.pick(FLOAT_CONSTS)), FLOAT)
        return Expr(ch.pick(("True", "False")), BOOL, 1)

    # ints
    def gen_int(self, depth: int) -> Expr:
        if depth <= 0:
            return self.leaf(INT)
        ch = self.ch
        helpers = self.callable_helpers(INT)
        kind = ch.weighted(
            [
                (4, "leaf"),
                (6, "binop"),
                (1, "unary"),
                (2, "absminmax"),
                (1, "ifexp"),
                (1, "andor"),
                (2, "from_float"),
                (1, "from_bool"),
                (3 if helpers else 0, "call"),
                (1, "reduce"),
            ]
        )
        d = depth - 1
        if kind == "reduce":  # over a range (min/max of an empty one raise ValueError on both sides)
            fn = ch.pick(("sum", "min", "max", "any", "all"))
            it = f"range({self.range_args()[0]})"
            if ch.chance(0.3):
                it = f"reversed({it})"
            if fn in ("any", "all"):
                return Expr(f"int({fn}({it}))", INT, 1)
            return Expr(f"{fn}({it})", INT, MAX_ITER * MAX_ITER if fn == "sum" else MAX_ITER)
        if kind == "leaf":
            return self.leaf(INT)
        if kind == "binop":
            return self.int_binop(d)
        if kind == "unary":
            a = self.gen_int(d)
            op = ch.pick(("-", "~", "+"))
            return Expr(f"({op}{a.text})", INT, a.bound + (op == "~"))
        if kind == "absminmax":
            fn = ch.pick(("abs", "min", "max"))
            args = [self.gen_int(d) for _ in range(1 if fn == "abs" else ch.integer(2, 3))]
            return Expr(f"{fn}({', '.join(a.text for a in args)})", INT, max(a.bound for a in args))
        if kind == "ifexp":
            a, c, b = self.gen_int(d), self.gen_cond(d), self.gen_int(d)
            return Expr(f"({a.text} if {c.text} else {b.text})", INT, max(a.bound, b.bound))
        if kind == "andor":
            a, b = self.gen_int(d), self.gen_int(d)
            return Expr(f"({a.text} {ch.pick(('and', 'or'))} {b.text})", INT, max(a.bound, b.bound))
        if kind == "from_float":
            return self.float_to_int(d)
        if kind == "from_bool":
            b = self.gen_bool(d)
            if ch.chance(0.5):
                return Expr(f"int({b.text})", INT, 1)
            a = self.gen_int(d)
            return Expr(f"({b.text} + {a.text})", INT, a.bound + 1)
        h = ch.pick(helpers)
        call = self.call_text(h, d)
        if isinstance(h.ret, tuple):
            k = ch.pick([k for k, et in enumerate(h.ret) if et == INT])
            return Expr(f"{call}[{k}]", INT, VAR_BOUND)
        return Expr(call, INT, VAR_BOUND)

    def divisor(self, d: int) -> Expr:
        ch = self.ch
        kind = ch.weighted([(3, "lit"), (1, "raw"), (1, "or1"), (1, "abs1")])
        if kind == "lit":
            v = ch.pick(DIVISORS)
            return Expr(_int_lit(v), INT, abs(v))
        b = self.to_bound(self.gen_int(d), VAR_BOUND)
        if kind == "raw":
            return b  # may be zero: ZeroDivisionError must match
        if kind == "or1":
            return Expr(f"({b.text} or 1)", INT, max(b.bound, 1))
        return Expr(f"(abs({b.text}) + 1)", INT, b.bound + 1)

    def int_binop(self, d: int) -> Expr:
        ch = self.ch
        op = ch.pick(("+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"))
        a = self.gen_int(d)
        if op in ("+", "-"):
            b = self.gen_int(d)
            if a.bound + b.bound > EXPR_LIMIT:
                a, b = self.to_bound(a, VAR_BOUND), self.to_bound(b, VAR_BOUND)
            return Expr(f"({a.text} {op} {b.text})", INT, a.bound + b.bound)
        if op == "*":
            b = self.gen_int(d)
            if a.bound * b.bound > EXPR_LIMIT:
                a, b = self.to_bound(a, VAR_BOUND), self.to_bound(b, VAR_BOUND)
            return Expr(f"({a.text} * {b.text})", INT, a.bound * b.bound)
        if op in ("//", "%"):
            b = self.divisor(d)
            bound = a.bound if op == "//" else b.bound
            return Expr(f"({a.text} {op} {b.text})", INT, bound)
        if op == "**":
            k = ch.pick((2, 0, 1, 3))
            limit = {0: EXPR_LIMIT, 1: EXPR_LIMIT, 2: VAR_BOUND, 3: 2**20}[k]
            a = self.to_bound(a, limit, SMALL_MODULI if k == 3 else VAR_MODULI)
            return Expr(f"({a.text} ** {k})", INT, 1 if k == 0 else a.bound**k)
        if op in ("&", "|", "^"):
            b = self.gen_int(d)
            bound = 1 << max(a.bound, b.bound).bit_length()
            if bound > EXPR_LIMIT:
                a, b = self.to_bound(a, VAR_BOUND), self.to_bound(b, VAR_BOUND)
                bound = 1 << max(a.bound, b.bound).bit_length()
            return Expr(f"({a.text} {op} {b.text})", INT, bound)
        # shifts: a constant count, or a runtime count reduced to 0..7 (never negative)
        if ch.chance(0.5):
            k = ch.integer(0, 7)
            count, maxk = Expr(str(k), INT, k), k
        else:
            c = self.to_bound(self.gen_int(d), VAR_BOUND)
            count, maxk = Expr(f"({c.text} % 8)", INT, 7), 7
        if op == ">>":
            return Expr(f"({a.text} >> {count.text})", INT, a.bound)
        a = self.to_bound(a, VAR_BOUND)
        return Expr(f"({a.text} << {count.text})", INT, a.bound << maxk)

    def clamp(self, f: Expr) -> str:
        """A float in [-1e6, 1e6], or NaN (and, for a plain variable, sometimes an infinity)."""
        ch = self.ch
        simple = f.text.isidentifier()
        forms = ["min(max({f}, -1e6), 1e6)", "max(min({f}, 1e6), -1e6)"]
        if simple:
            forms += [
                "({f} if abs({f}) < 1e6 else 0.5)",
                "({f} % 1000.0 if math.isfinite({f}) else {f})",
            ]  # inf: OverflowError
        return ch.pick(forms).format(f=f.text)

    def float_to_int(self, d: int) -> Expr:
        fn = self.ch.pick(("int", "math.floor", "math.ceil", "math.trunc", "round"))
        return Expr(f"{fn}({self.clamp(self.gen_float(d))})", INT, CLAMP_BOUND)

    # floats
    def gen_float(self, depth: int) -> Expr:
        if depth <= 0:
            if self.ch.chance(0.15) and self.vars_of(INT):
                return Expr(f"float({self.leaf(INT).text})", FLOAT)  # leaves are <= 2**53 or literal
            return self.leaf(FLOAT)
        ch = self.ch
        helpers = self.callable_helpers(FLOAT)
        kind = ch.weighted(
            [
                (4, "leaf"),
                (6, "binop"),
                (2, "pow"),
                (1, "unary"),
                (2, "absminmax"),
                (1, "ifexp"),
                (1, "andor"),
                (4, "math"),
                (1, "from_int"),
                (1, "intdiv"),
                (3 if helpers else 0, "call"),
            ]
        )
        d = depth - 1
        if kind == "leaf":
            return self.leaf(FLOAT)
        if kind == "binop":
            op = ch.pick(("+", "-", "*", "/", "//", "%"))
            mix = ch.weighted([(4, "ff"), (1, "fi"), (1, "if")])
            a = self.gen_float(d) if mix != "if" else self.exact(self.gen_int(d))
            if op in ("/", "//", "%"):
                b = self.float_divisor(d) if mix != "fi" else self.exact(self.divisor(d))
            else:
                b = self.gen_float(d) if mix != "fi" else self.exact(self.gen_int(d))
            return Expr(f"({a.text} {op} {b.text})", FLOAT)
        if kind == "pow":
            form = ch.weighted([(4, "int_exp"), (2, "root"), (1, "float_exp"), (1, "int_base")])
            if form == "int_exp":
                k = ch.pick((2, 3, 0, 1, 2, 3, -1, -2))
                return Expr(f"({self.gen_float(d).text} ** {_int_lit(k)})", FLOAT)
            if form == "root":
                return Expr(f"(abs({self.gen_float(d).text}) ** {ch.pick(('0.5', '1.5', '2.0', '0.25'))})", FLOAT)
            if form == "float_exp":
                return Expr(f"(abs({self.gen_float(d).text}) ** {self.gen_float(d).text})", FLOAT)
            base = self.exact(self.gen_int(d))
            return Expr(f"({base.text} ** {_int_lit(ch.pick((-1, -2)))})", FLOAT)
        if kind == "unary":
            return Expr(f"({ch.pick(('-', '+'))}{self.gen_float(d).text})", FLOAT)
        if kind == "absminmax":
            fn = ch.pick(("abs", "min", "max"))
            args = [self.gen_float(d) for _ in range(1 if fn == "abs" else ch.integer(2, 3))]
            return Expr(f"{fn}({', '.join(a.text for a in args)})", FLOAT)
        if kind == "ifexp":
            a, c, b = self.gen_float(d), self.gen_cond(d), self.gen_float(d)
            return Expr(f"({a.text} if {c.text} else {b.text})", FLOAT)
        if kind == "andor":
            a, b = self.gen_float(d), self.gen_float(d)
            return Expr(f"({a.text} {ch.pick(('and', 'or'))} {b.text})", FLOAT)
        if kind == "math":
            return self.math_call(d)
        if kind == "from_int":
            return Expr(f"float({self.exact(self.gen_int(d)).text})", FLOAT)
        if kind == "intdiv":
            a, b = self.exact(self.gen_int(d)), self.exact(self.divisor(d))
            return Expr(f"({a.text} / {b.text})", FLOAT)
        h = ch.pick(helpers)
        call = self.call_text(h, d)
        if isinstance(h.ret, tuple):
            k = ch.pick([k for k, et in enumerate(h.ret) if et == FLOAT])
            return Expr(f"{call}[{k}]", FLOAT)
        return Expr(call, FLOAT)

    def float_divisor(self, d: int) -> Expr:
        """Mostly nonzero (NaN and infinities pass); sometimes anything, so division by zero is tested."""
        kind = self.ch.weighted([(1, "raw"), (2, "or1"), (1, "abs"), (1, "lit")])
        if kind == "lit":
            return Expr(_neg(self.ch.pick(("2.0", "-0.5", "3.0", "1e-300", "math.inf", "-7.25"))), FLOAT)
        b = self.gen_float(d)
        if kind == "raw":
            return b
        if kind == "or1":
            return Expr(f"({b.text} or 1.0)", FLOAT)
        return Expr(f"(abs({b.text}) + 0.5)", FLOAT)

    def math_call(self, d: int) -> Expr:
        ch = self.ch
        fn = ch.pick(
            (
                "sqrt",
                "exp",
                "log",
                "sin",
                "cos",
                "tanh",
                "atan",
                "fabs",
                "log1p",
                "hypot",
                "atan2",
                "copysign",
                "fmod",
                "floor",
            )
        )
        x = self.gen_float(d)
        if fn == "floor":  # math.floor returns int; back to float through an int op
            return Expr(f"(math.floor({self.clamp(x)}) * 0.5)", FLOAT)
        if fn == "copysign":
            # The sign bit of a NaN made by an operation (inf - inf, 0 * inf) is unspecified: hardware
            # and LLVM's constant folder differ.  copysign would expose it, so its sign source is no NaN.
            v = self.leaf(FLOAT).text
            return Expr(f"math.copysign({x.text}, ({v} if {v} == {v} else -1.0))", FLOAT)
        if fn in ("hypot", "atan2", "fmod"):
            y = self.gen_float(d)
            if fn == "fmod" and ch.chance(0.5):
                y = Expr(f"(abs({y.text}) + 1.0)", FLOAT)
            return Expr(f"math.{fn}({x.text}, {y.text})", FLOAT)
        if ch.chance(0.15) and fn in ("sqrt", "exp", "sin", "fabs"):
            i = self.exact(self.gen_int(d))  # math functions accept ints too
            return Expr(f"math.{fn}({i.text})", FLOAT)
        guarded = ch.chance(0.5)
        if guarded:
            arg = {
                "sqrt": "abs({x})",
                "log": "(abs({x}) + 1.0)",
                "log1p": "abs({x})",
                "exp": "min({x}, 700.0)",
                "sin": "({x} % 6.25)",
                "cos": "min(max({x}, -1e6), 1e6)",
            }.get(fn, "{x}").format(x=x.text)
        else:
            arg = x.text
        return Expr(f"math.{fn}({arg})", FLOAT)

    # bools
    def gen_bool(self, depth: int) -> Expr:
        if depth <= 0:
            if self.vars_of(BOOL) and self.ch.chance(0.5):
                return self.leaf(BOOL)
            return self.compare(0)
        ch = self.ch
        kind = ch.weighted(
            [(6, "compare"), (1, "leaf"), (2, "not"), (3, "andor"), (1, "chain"), (1, "isx"), (1, "in"), (1, "kind")]
        )
        d = depth - 1
        if kind == "in":  # on a tuple display (ints only: Python finds a NaN by identity) or on a range
            word = ch.pick(("in", "not in"))
            if ch.chance(0.5):
                x = self.gen_int(d)
                items = ", ".join(self.gen_int(d).text for _ in range(ch.integer(1, 3)))
                return Expr(f"({x.text} {word} ({items},))", BOOL, 1)
            x = self.gen(ch.pick((INT, FLOAT)), d)
            return Expr(f"({x.text} {word} range({self.range_args()[0]}))", BOOL, 1)
        if kind == "kind":  # isinstance, decided at compile time
            x = self.gen(self.pick_type(), d)
            cls = ch.pick(("int", "float", "bool", "(int, float)", "(bool, float)"))
            return Expr(f"isinstance({x.text}, {cls})", BOOL, 1)
        if kind == "compare":
            return self.compare(d)
        if kind == "leaf":
            return self.leaf(BOOL)
        if kind == "not":
            return Expr(f"(not {self.gen_cond(d).text})", BOOL, 1)
        if kind == "andor":
            a, b = self.gen_bool(d), self.gen_bool(d)
            return Expr(f"({a.text} {ch.pick(('and', 'or'))} {b.text})", BOOL, 1)
        if kind == "chain":
            t = ch.pick((INT, FLOAT))
            a, b, c = (self.gen(t, d) for _ in range(3))
            o1, o2 = ch.pick(("<", "<=", "!=")), ch.pick(("<", "<=", "==", ">"))
            return Expr(f"({a.text} {o1} {b.text} {o2} {c.text})", BOOL, 1)
        f = self.gen_float(d)
        return Expr(f"math.{ch.pick(('isnan', 'isinf', 'isfinite'))}({f.text})", BOOL, 1)

    def compare(self, d: int) -> Expr:
        ch = self.ch
        mix = ch.weighted([(3, "ii"), (3, "ff"), (1, "if"), (1, "fi")])
        a = self.gen_int(d) if mix[0] == "i" else self.gen_float(d)
        b = self.gen_int(d) if mix[1] == "i" else self.gen_float(d)
        if mix in ("if", "fi"):
            a = self.exact(a) if a.type == INT else a
            b = self.exact(b) if b.type == INT else b
        op = ch.pick(("<", "<=", ">", ">=", "==", "!="))
        return Expr(f"({a.text} {op} {b.text})", BOOL, 1)

    def gen_cond(self, depth: int) -> Expr:
        """A condition: mostly a bool, sometimes the truthiness of an int or a float."""
        kind = self.ch.weighted([(6, "bool"), (1, "int"), (1, "float")])
        if kind == "bool":
            return self.gen_bool(depth)
        return self.gen(INT if kind == "int" else FLOAT, depth)

    def expr_depth(self) -> int:
        return self.ch.integer(0, 3)

    # -- statements --------------------------------------------------------------------------------
    def pick_type(self):
        return self.ch.weighted([(3, INT), (3, FLOAT), (1, BOOL)])

    def value_for(self, t) -> Expr:
        """A value to store in a variable of type ``t`` (ints within VAR_BOUND)."""
        e = self.gen(t, self.expr_depth())
        return self.to_bound(e, VAR_BOUND) if t == INT else e

    def block(self, depth: int, lo: int = 1, hi: int = 3):
        """Statements of a nested block; new names stay local to it (they may be unassigned after)."""
        saved = dict(self.scope)
        self.indent += 1
        start = len(self.lines)
        self.statements(depth, self.ch.integer(lo, hi))
        if len(self.lines) == start:
            self.emit("pass")
        self.indent -= 1
        self.scope = saved

    def statements(self, depth: int, n: int):
        for _ in range(n):
            if self.statement(depth):
                break  # a terminator: anything after it would be dead code

    def loop_cap_ok(self, cap: int) -> bool:
        return self.mult * cap <= self.budget

    def statement(self, depth: int) -> bool:
        ch = self.ch
        nested = depth < self.max_depth
        reassignable = [n for t in SCALARS for n in self.vars_of(t, assignable=True)]
        arith = self.vars_of(INT, True) + self.vars_of(FLOAT, True)
        kind = ch.weighted(
            [
                (6, "assign"),
                (3 if reassignable else 0, "reassign"),
                (3 if arith else 0, "augassign"),
                (4 if nested else 0, "if"),
                (3 if nested and self.loop_cap_ok(2) else 0, "for"),
                (2 if nested and self.loop_cap_ok(2) else 0, "while"),
                (1, "tuple"),
                (1 if nested and self.loop_cap_ok(MAX_ITER) else 0, "list"),
                (2 if self.callable_helpers() else 0, "call"),
                (3 if self.loops else 0, "jump"),
                (1 if depth > 0 else 0, "return"),
                (1, "raise"),
                (1 if depth > 0 else 0, "pass"),
            ]
        )
        return getattr(self, "stmt_" + kind)(depth)

    def stmt_assign(self, depth):
        ch = self.ch
        if ch.chance(0.1):
            types = tuple(self.pick_type() for _ in range(ch.integer(2, 3)))
            vals = [self.value_for(t) for t in types]
            name = self.fresh("tuple")
            self.emit(f"{name} = ({', '.join(v.text for v in vals)})")
            self.scope[name] = (types, tuple(v.bound for v in vals))
            return False
        t = self.pick_type()
        v = self.value_for(t)
        name = self.fresh(t)
        self.emit(f"{name} = {v.text}")
        self.scope[name] = (t, VAR_BOUND if t == INT else 1)
        return False

    def stmt_reassign(self, depth):
        reassignable = [n for t in SCALARS for n in self.vars_of(t, assignable=True)]
        name = self.ch.pick(reassignable)
        t = self.scope[name][0]
        v = self.value_for(t)
        self.emit(f"{name} = {v.text}")
        self.scope[name] = (t, VAR_BOUND if t == INT else 1)
        return False

    def stmt_augassign(self, depth):
        ch = self.ch
        name = ch.pick(self.vars_of(INT, True) + self.vars_of(FLOAT, True))
        t, bound = self.scope[name]
        if t == FLOAT:
            op = ch.pick(("+=", "-=", "*=", "/=", "//=", "%="))
            if ch.chance(0.2):
                v = self.exact(self.gen_int(1))
            elif op in ("/=", "//=", "%="):
                v = self.float_divisor(self.expr_depth())
            else:
                v = self.gen_float(self.expr_depth())
            self.emit(f"{name} {op} {v.text}")
            return False
        op = ch.pick(("+=", "-=", "*=", "//=", "%=", "&=", "^="))
        if op in ("//=", "%="):
            v = self.divisor(self.expr_depth())
            new = bound if op == "//=" else v.bound
        else:
            v = self.gen_int(self.expr_depth())
            if op == "*=":
                v = self.to_bound(v, VAR_BOUND)
                new = bound * v.bound
            elif op in ("&=", "^="):
                v = self.to_bound(v, VAR_BOUND)
                new = 1 << max(bound, v.bound).bit_length()
            else:
                v = self.to_bound(v, EXPR_LIMIT - VAR_BOUND)
                new = bound + v.bound
        self.emit(f"{name} {op} {v.text}")
        if new > VAR_BOUND:
            self.emit(f"{name} %= {_int_lit(ch.pick(VAR_MODULI))}")
        self.scope[name] = (INT, VAR_BOUND)
        return False

    def stmt_if(self, depth):
        ch = self.ch
        self.emit(f"if {self.gen_cond(self.expr_depth()).text}:")
        self.block(depth + 1)
        for _ in range(ch.weighted([(3, 0), (1, 1), (1, 2)])):
            self.emit(f"elif {self.gen_cond(self.expr_depth()).text}:")
            self.block(depth + 1)
        if ch.chance(0.5):
            self.emit("else:")
            self.block(depth + 1)
        return False

    def range_args(self):
        """Arguments of ``range`` and the most iterations they allow (<= MAX_ITER)."""
        ch = self.ch

        def small(lo, hi):  # an int in [lo, hi], often computed at run time
            if ch.chance(0.5):
                return _int_lit(ch.integer(lo, hi))
            e = self.to_bound(self.gen_int(ch.integer(0, 1)), VAR_BOUND)
            span = hi - lo + 1
            return f"({e.text} % {span})" if lo == 0 else f"({e.text} % {span} + {_int_lit(lo)})"

        form = ch.weighted([(3, "stop"), (2, "start_stop"), (2, "step")])
        if form == "stop":
            return small(0, MAX_ITER), MAX_ITER
        if form == "start_stop":
            return f"{small(-10, 10)}, {small(-10, 10)}", MAX_ITER
        step = ch.pick((-1, 2, -2, 3, -3, 1))
        if step < 0 and ch.chance(0.5):
            return f"{small(0, MAX_ITER - 1)}, -1, {step}", MAX_ITER  # the classic countdown
        return f"{small(-10, 10)}, {small(-10, 10)}, {step}", 20 // abs(step) + 1

    def loop_body(self, depth, cap):
        saved_mult = self.mult
        self.mult *= cap
        self.cost = max(self.cost, self.mult)
        self.loops += 1
        self.block(depth + 1, 1, 4)
        self.loops -= 1
        self.mult = saved_mult

    def loop_else(self, depth):
        if self.ch.chance(0.2):
            self.emit("else:")
            self.block(depth + 1, 1, 2)

    def stmt_for(self, depth):
        form = self.ch.weighted([(6, "range"), (1, "reversed"), (1, "enumerate"), (1, "zip"), (1, "tuple")])
        args, cap = self.range_args()
        targets = {self.fresh("loop"): MAX_ITER}  # each loop variable and the bound of its values
        k = next(iter(targets))
        if form == "range":
            header = f"for {k} in range({args}):"
        elif form == "reversed":
            header = f"for {k} in reversed(range({args})):"
        elif form == "enumerate":
            start = self.ch.integer(-5, 5)
            item = self.fresh("loop")
            targets = {k: MAX_ITER + 5, item: MAX_ITER}
            header = f"for {k}, {item} in enumerate(range({args}){'' if start == 0 else f', {start}'}):"
        elif form == "zip":
            other, cap2 = self.range_args()
            cap = min(cap, cap2)
            item = self.fresh("loop")
            targets[item] = MAX_ITER
            header = f"for {k}, {item} in zip(range({args}), reversed(range({other}))):"
        else:  # a tuple display, unrolled
            values = [
                self.to_bound(self.gen_int(self.ch.integer(0, 1)), VAR_BOUND) for _ in range(self.ch.integer(1, 4))
            ]
            cap = len(values)
            targets = {k: VAR_BOUND}
            header = f"for {k} in ({', '.join(v.text for v in values)},):"
        if not self.loop_cap_ok(cap):
            return self.stmt_assign(depth)
        self.emit(header)
        saved = dict(self.scope)
        for name, bound in targets.items():
            self.scope[name] = (INT, bound)
            self.protected.add(name)
        self.loop_body(depth, cap)
        self.scope = saved  # the loop variable is unbound after an empty range
        self.loop_else(depth)
        return False

    def stmt_list(self, depth):
        """A list of ints or floats built over a range (a comprehension, or ``[]`` and ``append``), then read
        into a new variable: its length, an item, or ``min``/``max`` of it."""
        ch = self.ch
        args, cap = self.range_args()
        t = ch.pick((INT, FLOAT))
        k, name = self.fresh("loop"), self.fresh("list")
        saved, saved_mult = dict(self.scope), self.mult
        self.scope[k] = (INT, MAX_ITER)
        self.mult *= cap
        self.cost = max(self.cost, self.mult)
        item = self.value_for(t).text
        cond = f"({self.gen_cond(0).text}) or {k} % 2 == 0" if ch.chance(0.4) else None  # (never always false)
        self.mult, self.scope = saved_mult, saved
        if ch.chance(0.5):
            self.emit(f"{name} = [{item} for {k} in range({args}){f' if {cond}' if cond else ''}]")
        else:
            self.emit(f"{name} = []")
            self.emit(f"for {k} in range({args}):")
            if cond:
                self.emit(f"    if {cond}:")
            self.emit(f"    {'    ' if cond else ''}{name}.append({item})")
        zero = "0" if t == INT else "0.0"
        read = ch.pick(("len", "item", "min", "max"))
        out = self.fresh(INT if read == "len" else t)
        if read == "len":
            self.emit(f"{out} = len({name})")
        elif read == "item":
            at = self.to_bound(self.gen_int(0), VAR_BOUND).text
            self.emit(f"{out} = {name}[{at} % len({name})] if {name} else {zero}")
        else:
            self.emit(f"{out} = {read}({name}) if {name} else {zero}")
        self.scope[out] = (INT if read == "len" else t, VAR_BOUND if read == "len" or t == INT else 1)
        return False

    def stmt_while(self, depth):
        ch = self.ch
        n = ch.integer(1, MAX_ITER)
        if not self.loop_cap_ok(n):
            return self.stmt_assign(depth)
        w = self.fresh("counter")
        self.emit(f"{w} = 0")
        self.scope[w] = (INT, MAX_ITER + 1)
        self.protected.add(w)
        form = ch.weighted([(3, "plain"), (2, "and"), (1, "true")])
        saved_mult = self.mult
        self.mult *= n  # the condition runs in the loop too
        cond = self.gen_cond(ch.integer(0, 2)).text if form == "and" else None
        self.mult = saved_mult
        if form == "plain":
            self.emit(f"while {w} < {n}:")
        elif form == "and":
            self.emit(f"while {w} < {n} and {cond}:" if ch.chance(0.5) else f"while {cond} and {w} < {n}:")
        else:
            self.emit("while True:")
        # the counter moves first, so `continue` cannot skip it
        self.indent += 1
        self.emit(f"{w} += 1")
        if form == "true":
            self.emit(f"if {w} > {n}:")
            self.emit("    break")
        self.indent -= 1
        self.loop_body(depth, n)
        if form != "true":
            self.loop_else(depth)
        return False

    def stmt_tuple(self, depth):
        ch = self.ch
        same = [vs for t in SCALARS if len(vs := self.vars_of(t, True)) >= 2]
        tuples = self.tuples()
        kind = ch.weighted([(2, "pair"), (2 if same else 0, "swap"), (1 if tuples else 0, "unpack")])
        if kind == "swap":
            vs = ch.pick(same)
            a = ch.pick(vs)
            b = ch.pick([v for v in vs if v != a])
            self.emit(f"{a}, {b} = {b}, {a}")
            return False
        if kind == "unpack":
            n, types, bounds = ch.pick(tuples)
            names = [self.fresh(t) for t in types]
            self.emit(f"{', '.join(names)} = {n}")
            for name, t in zip(names, types):
                self.scope[name] = (t, VAR_BOUND if t == INT else 1)
            return False
        types = (self.pick_type(), self.pick_type())
        vals = [self.value_for(t) for t in types]
        names = [self.fresh(t) for t in types]
        self.emit(f"{names[0]}, {names[1]} = {vals[0].text}, {vals[1].text}")
        for name, t in zip(names, types):
            self.scope[name] = (t, VAR_BOUND if t == INT else 1)
        return False

    def stmt_call(self, depth):
        h = self.ch.pick(self.callable_helpers())
        call = self.call_text(h, self.expr_depth())
        types = h.ret if isinstance(h.ret, tuple) else (h.ret,)
        names = [self.fresh(t) for t in types]
        self.emit(f"{', '.join(names)} = {call}")
        for name, t in zip(names, types):
            self.scope[name] = (t, VAR_BOUND if t == INT else 1)
        return False

    def stmt_jump(self, depth):
        word = self.ch.pick(("break", "continue"))
        if depth > 0 and self.ch.chance(0.3):
            self.emit(word)
            return True
        self.emit(f"if {self.gen_cond(self.expr_depth()).text}:")
        self.emit(f"    {word}")
        return False

    def return_value(self) -> str:
        if isinstance(self.ret, tuple):
            vals = [self.value_for(t).text for t in self.ret]
            return ", ".join(vals)
        return self.value_for(self.ret).text

    def stmt_return(self, depth):
        if self.ch.chance(0.5):
            self.emit(f"return {self.return_value()}")
            return True
        self.emit(f"if {self.gen_cond(self.expr_depth()).text}:")
        self.emit(f"    return {self.return_value()}")
        return False

    def stmt_raise(self, depth):
        # two conditions each, so that most runs get past the statement
        d = self.expr_depth()
        c1, c2 = self.gen_cond(d).text, self.gen_cond(d).text
        if self.ch.chance(0.4):
            self.emit(f'assert {c1} or {c2}, "generated assertion"')
        else:
            self.emit(f"if {c1} and {c2}:")
            self.emit(f'    raise {self.ch.pick(("ValueError", "ArithmeticError", "RuntimeError"))}("generated")')
        return False

    def stmt_pass(self, depth):
        self.emit("pass")
        return False

    # -- whole function ----------------------------------------------------------------------------
    def generate(self, forced_callee: Helper | None = None) -> str:
        for name, default in zip(self.param_names, self.defaults):
            if default == "None":  # an optional float: filled in, then a float like any other
                self.emit(f"if {name} is None:")
                self.emit(f"    {name} = {self.ch.pick(FLOAT_CONSTS)}")
        if forced_callee is not None:
            self.stmt_call_to(forced_callee)
        self.statements(0, self.ch.integer(1, self.max_stmts))
        self.emit(f"return {self.return_value()}")
        head = ["@aot.jit"] if self.decorated else []
        params = [n if d is None else f"{n}={d}" for n, d in zip(self.param_names, self.defaults)]
        if self.kwonly:
            params.insert(len(params) - self.kwonly, "*")
        return "\n".join(head + [f"def {self.name}({', '.join(params)}):"] + self.lines)

    def stmt_call_to(self, h: Helper):
        saved = self.callees
        self.callees = [h]
        self.stmt_call(0)
        self.callees = saved


# --------------------------------------------------------------------------------------------------
# Whole module


def _ret_type(ch: Chooser, allow_bool: bool):
    scalar = [(3, INT), (3, FLOAT), (1 if allow_bool else 0, BOOL)]
    if ch.chance(0.35):
        return tuple(ch.weighted(scalar) for _ in range(ch.integer(2, 3)))
    return ch.weighted(scalar)


def _defaults(ch: Chooser, params: tuple) -> tuple[tuple, int]:
    """Defaults for the last parameters of a helper (texts; "None" for an optional float) and how many of
    them are keyword-only."""
    n = len(params)
    count = ch.integer(0, n) if ch.chance(0.5) else 0
    defaults: list[str | None] = [None] * n
    for i in range(n - count, n):
        if params[i] == FLOAT:
            defaults[i] = "None" if ch.chance(0.35) else ch.pick(FLOAT_CONSTS)
        else:
            defaults[i] = _int_lit(ch.pick([v for v in INT_CONSTS if abs(v) <= VAR_BOUND]))
    kwonly = ch.integer(0, count) if count and ch.chance(0.4) else 0
    return tuple(defaults), kwonly


def generate(ch: Chooser, entry: str = "entry") -> Program:
    """One random module; ``entry`` is its ``@aot.jit`` function."""
    consts: dict[str, tuple] = {}
    const_lines = []
    for n in range(ch.weighted([(2, 0), (2, 1), (1, 2)])):
        kind = ch.pick((INT, FLOAT, "tuple"))
        if kind == INT:
            v = ch.pick(INT_CONSTS)
            consts[f"CI{n}"] = (INT, abs(v))
            const_lines.append(f"CI{n} = {v}")
        elif kind == FLOAT:
            v = ch.pick(("0.25", "-1.5", "1e-8", "6.02e23", "0.1"))
            consts[f"CF{n}"] = (FLOAT, 1)
            const_lines.append(f"CF{n} = {v}")
        else:
            a, b = ch.pick(INT_CONSTS), ch.pick(("2.5", "-0.0", "1e100"))
            consts[f"CT{n}"] = ((INT, FLOAT), (abs(a), 1))
            const_lines.append(f"CT{n} = ({a}, {b})")

    helpers: list[Helper] = []
    texts = []
    n_helpers = ch.weighted([(1, 0), (2, 1), (3, 2)])
    for n in range(n_helpers):
        params = tuple(ch.pick((INT, FLOAT)) for _ in range(ch.integer(1, 3)))
        ret = _ret_type(ch, allow_bool=False)
        if isinstance(ret, tuple):
            ret = ret[:2]
        budget = 20 if n == 0 else 400
        defaults, kwonly = _defaults(ch, params)
        g = FunctionGen(
            ch,
            f"h{n}",
            params,
            ret,
            list(helpers),
            consts,
            budget=budget,
            max_depth=2,
            max_stmts=4,
            decorated=False,
            defaults=defaults,
            kwonly=kwonly,
        )
        forced = helpers[-1] if helpers and ch.chance(0.8) else None  # h1 calls h0
        texts.append(g.generate(forced))
        helpers.append(Helper(g.name, params, ret, g.cost, tuple(g.param_names), defaults, kwonly))

    params = tuple(ch.pick((INT, FLOAT)) for _ in range(ch.integer(1, 3)))
    ret = _ret_type(ch, allow_bool=True)
    g = FunctionGen(ch, entry, params, ret, helpers, consts, budget=2000, max_depth=3, max_stmts=7, decorated=True)
    forced = ch.pick(helpers) if helpers and ch.chance(0.7) else None
    texts.append(g.generate(forced))

    source = "\n".join(["import math", "import aot", "", *const_lines, "", ""]) + "\n\n\n".join(texts) + "\n"
    return Program(source=source, entry=entry, params=params, ret=ret)


PRANGE_LEN = 40  # the length of a prange program's array argument; its loops stay inside it


def generate_prange(ch: Chooser, entry: str = "entry") -> Program:
    """A module whose ``entry`` (``@aot.jit(parallel=True)``) runs an ``aot.prange`` loop with reductions
    (``+=``/``-=``/``*=`` on ints; ``+=`` and ``min``/``max`` on floats), private temporaries and a write to
    ``out[k]``, and ``entry_serial``: the same body compiled without ``parallel``. Parameters: an int, a float
    and ``out`` (a float array of ``PRANGE_LEN``); returns ``(int sum, float sum, int product, float min or
    max)``. Float terms are kept below 1000 (``math.fmod``), so a float sum in another order differs by
    rounding only."""
    g = FunctionGen(
        ch, entry, (INT, FLOAT), (INT, FLOAT, INT), [], {}, budget=20, max_depth=2, max_stmts=3, decorated=True
    )
    out, s, f, p, m, k = "out", g.fresh(INT), g.fresh(FLOAT), g.fresh(INT), g.fresh(FLOAT), g.fresh("loop")
    pick = ch.pick(("min", "max"))
    step = ch.pick((1, 1, 2, 3, -1, -2))
    if step > 0:
        start = ch.integer(0, 10)
        stop = ch.integer(start, PRANGE_LEN)
    else:
        start = ch.integer(0, PRANGE_LEN - 1)
        stop = ch.integer(-1, start)
    spelled = ch.pick(("aot.prange", "prange"))
    g.scope[k] = (INT, PRANGE_LEN)
    g.protected.add(k)
    g.mult = MAX_ITER
    first = g.param_names[1]
    lines = [f"{s} = 0", f"{f} = 0.0", f"{p} = 1", f"{m} = {first}", f"for {k} in {spelled}({start}, {stop}, {step}):"]
    body = []
    for _ in range(ch.integer(0, 2)):  # private temporaries, assigned before they are read
        e = g.to_bound(g.gen_int(2), VAR_BOUND)
        t = g.fresh(INT)
        body.append(f"{t} = {e.text}")
        g.scope[t] = (INT, VAR_BOUND)
    multiplied = False  # (one factor of at most 2 per iteration: a product stays below 2**PRANGE_LEN)
    for _ in range(ch.integer(1, 3)):
        kinds = ("add", "sub", "float", "select", "write")
        kind = ch.pick(kinds if multiplied else (*kinds, "mul"))
        multiplied = multiplied or kind == "mul"
        if kind in ("add", "sub"):
            e = g.to_bound(g.gen_int(2), VAR_BOUND)
            body.append(f"{s} {'+' if kind == 'add' else '-'}= {e.text}")
        elif kind == "mul":
            e = g.to_bound(g.gen_int(2), VAR_BOUND)
            body.append(f"{p} *= ({e.text}) % 2 + 1")
        elif kind == "select":
            body.append(f"{m} = {pick}({m}, {g.gen_float(2).text})")
        elif kind == "float":
            body.append(f"{f} += math.fmod({g.gen_float(2).text}, 1000.0)")
        else:
            body.append(f"{out}[{k}] = {g.gen_float(2).text}")
    params = ", ".join([*g.param_names, out])
    text = "\n".join(["    " + line for line in lines] + ["        " + line for line in body])
    text += f"\n    return ({s}, {f}, {p}, {m})\n"
    source = "import math\nimport aot\nfrom aot import prange\n\n\n"
    source += f"@aot.jit(parallel=True)\ndef {entry}({params}):\n{text}\n\n"
    source += f"@aot.jit\ndef {entry}_serial({params}):\n{text.replace(spelled + '(', 'range(')}"
    return Program(source=source, entry=entry, params=(INT, FLOAT), ret=(INT, FLOAT, INT, FLOAT))


def hypothesis_programs():
    """A Hypothesis strategy of ``Program``s."""
    from hypothesis import strategies as st

    @st.composite
    def programs(draw):
        return generate(HypothesisChooser(draw))

    return programs()


def hypothesis_args(params: tuple):
    """A Hypothesis strategy of argument tuples for a program's parameter types."""
    from hypothesis import strategies as st

    ints = st.one_of(st.sampled_from(SPECIAL_INTS), st.integers(-VAR_BOUND, VAR_BOUND))
    floats = st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats())
    return st.tuples(*(ints if t == INT else floats for t in params))


def random_args(rng: random.Random, params: tuple) -> tuple:
    out = []
    for t in params:
        if t == INT:
            out.append(rng.choice(SPECIAL_INTS) if rng.random() < 0.5 else rng.randint(-VAR_BOUND, VAR_BOUND))
        else:
            out.append(
                rng.choice(SPECIAL_FLOATS)
                if rng.random() < 0.5
                else rng.choice((1.0, 1e3, 1e-3, 1e20)) * (rng.random() * 2 - 1)
            )
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# Comparing results


def same_result(a, b) -> bool:
    """Exact, type-aware, NaN-aware equality: 1 != 1.0, 0.0 != -0.0, nan == nan, True != 1."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def outcome(fn, args):
    """('ok', value) or ('raise', exception)."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - any exception is an outcome to compare
        return ("raise", e)


def same_outcome(a, b) -> bool:
    """Same value (``same_result``), or exceptions of the same type (messages may differ)."""
    if a[0] != b[0]:
        return False
    return type(a[1]) is type(b[1]) if a[0] == "raise" else same_result(a[1], b[1])


def describe(o) -> str:
    if o[0] == "raise":
        return f"raised {type(o[1]).__name__}: {o[1]}"
    return f"returned {o[1]!r}"


# --------------------------------------------------------------------------------------------------
# Self-check of the generator (plain Python only)


class Int64Escape(Exception):
    """An int intermediate left int64: a generator bug, not a compiler bug."""


class TypeDrift(Exception):
    """A variable took a value of another type than its name says: a generator bug."""


_PREFIX_TYPE = {"i": int, "k": int, "w": int, "f": float, "b": bool, "t": tuple}


def _check_int(v):
    if type(v) is int and not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise Int64Escape(v)
    return v


def _check_name(name, v):
    want = _PREFIX_TYPE.get(name[0])
    if want is not None and type(v) is not want:
        raise TypeDrift(f"{name} = {v!r}")
    return v


class _Instrument(ast.NodeTransformer):
    def visit_Import(self, node):
        node.names = [a for a in node.names if a.name != "aot"]
        return node if node.names else None

    def visit_FunctionDef(self, node):
        node.decorator_list = []
        self.generic_visit(node)
        return node

    def _wrap(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(ast.Name("__chk__", ast.Load()), [node], []), node)

    visit_BinOp = visit_UnaryOp = visit_Call = visit_BoolOp = visit_IfExp = _wrap

    def visit_Assign(self, node):
        self.generic_visit(node)
        out = [node]
        for tgt in node.targets:
            names = tgt.elts if isinstance(tgt, ast.Tuple) else [tgt]
            for n in names:
                out.append(
                    ast.Expr(
                        ast.Call(
                            ast.Name("__name_chk__", ast.Load()), [ast.Constant(n.id), ast.Name(n.id, ast.Load())], []
                        )
                    )
                )
        return out

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        name = node.target.id
        value = ast.Call(
            ast.Name("__chk__", ast.Load()), [ast.BinOp(ast.Name(name, ast.Load()), node.op, node.value)], []
        )
        return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node)


def instrument(source: str) -> str:
    """``source`` without decorators, checking every int intermediate and every variable's type."""
    tree = _Instrument().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


def checked_namespace(source: str) -> dict:
    ns = {"__chk__": _check_int, "__name_chk__": _check_name, "__name__": "progen_checked"}
    exec(compile(instrument(source), "<generated>", "exec"), ns)
    return ns


# --------------------------------------------------------------------------------------------------
# Views: random slicing programs over a 1-D and a 2-D float array


ARRAY1, ARRAY2 = "f64[:]", "f64[:, :]"
VIEW_PARAMS = (ARRAY1, ARRAY2, INT, INT)


class ViewGen:
    """One ``@aot.jit`` entry ``entry(a, m, i0, i1)`` that makes views of ``a`` (1-D) and ``m`` (2-D) — slices
    with constant, missing and runtime bounds and steps, ``a[i]`` of 2-D, ``[:, j]``, ``...``, ``.T``, chains
    of them — and new arrays (``np.zeros``, ``np.full``, ``.copy()``, whole-array arithmetic), reads them in
    order-sensitive loops and through reductions (``sum``, ``min``, ``max``, ``mean``, ``argmax``), and writes
    into them (fills, elements, slice assignment from other views, overlapping ones included). Out-of-range
    indices, zero steps and shapes that do not broadcast raise in both plain Python and compiled code, and are
    compared too."""

    def __init__(self, ch: Chooser):
        self.ch = ch
        self.lines: list[str] = []
        self.views: list[tuple[str, int]] = [("a", 1), ("m", 2)]

    def bound(self) -> str:
        return self.ch.weighted(
            [(3, ""), (4, str(self.ch.integer(-6, 6))), (2, "i0"), (1, "-i1"), (1, str(self.ch.integer(-40, 40)))]
        )

    def step(self) -> str:
        return self.ch.weighted([(4, ""), (4, str(self.ch.pick([1, 2, 3, -1, -2, -3]))), (1, "i1")])

    def slice_text(self) -> str:
        lo, hi, st = self.bound(), self.bound(), self.step()
        return f"{lo}:{hi}" + (f":{st}" if st else "")

    def index(self) -> str:
        return self.ch.weighted([(6, self.ch.pick(["0", "-1", "1"])), (1, str(self.ch.integer(-3, 3))), (1, "i1")])

    def view_expr(self) -> tuple[str, int]:
        text, ndim = self.ch.pick(self.views)
        for _ in range(self.ch.integer(1, 2)):
            if ndim == 1:
                text = f"{text}[{self.slice_text()}]"
                continue
            form = self.ch.integer(0, 7)
            if form == 0:
                text = f"{text}[{self.slice_text()}]"
            elif form == 1:
                text = f"{text}[{self.slice_text()}, {self.slice_text()}]"
            elif form == 2:
                text, ndim = f"{text}[{self.index()}]", 1
            elif form == 3:
                text, ndim = f"{text}[{self.slice_text()}, {self.index()}]", 1
            elif form == 4:
                text, ndim = f"{text}[{self.index()}, {self.slice_text()}]", 1
            elif form == 5:
                text = f"{text}.T"
            elif form == 6:
                text, ndim = f"{text}[..., {self.index()}]", 1
            else:
                text = f"{text}[...]"
        return text, ndim

    def statement(self, k: int) -> None:
        kind = self.ch.weighted(
            [(3, "view"), (4, "read"), (2, "fill"), (2, "assign"), (1, "element"), (2, "alloc"), (2, "reduce")]
        )
        if kind in ("view", "alloc"):
            text, ndim = self.view_expr()
            if kind == "alloc":  # a new array, from a view's shape or values
                text = self.ch.pick(
                    [
                        f"{text}.copy()",
                        f"np.zeros({text}.shape)",
                        f"np.full({text}.shape, -0.5)",
                        f"{text} * 2.0 + 1.0",
                        f"np.abs({text}) - {text}",
                    ]
                )
            name = f"v{k}"
            self.lines.append(f"{name} = {text}")
            self.views.append((name, ndim))
            return
        text, ndim = self.view_expr()
        if kind == "reduce":  # (an empty view's min, max and argmax raise ValueError, as in NumPy)
            self.lines.append(f"acc = acc * 0.5 + {text}.{self.ch.pick(['sum', 'min', 'max', 'mean', 'argmax'])}()")
            return
        if kind == "read":
            self.lines.append(f"acc = acc + len({text}) * 0.25")
            if ndim == 1:
                self.lines += [f"for x in {text}:", "    acc = acc * 0.5 + x"]
            else:
                self.lines += [f"for r in {text}:", "    for x in r:", "        acc = acc * 0.5 + x"]
        elif kind == "fill":
            value = self.ch.pick(["0.0", "-1.5", "acc", "2.0 * i0"])
            self.lines.append(f"{text}[{self.ch.pick(['...', self.slice_text()])}] = {value}")
        elif kind == "element":
            where = self.index() if ndim == 1 else f"{self.index()}, {self.index()}"
            self.lines.append(f"{text}[{where}] = acc")
        else:
            src, src_ndim = self.view_expr()
            while src_ndim > ndim:
                src, src_ndim = f"{src}[{self.index()}]", src_ndim - 1
            self.lines.append(f"{text}[...] = {src}")

    def generate(self, entry: str) -> str:
        for k in range(self.ch.integer(2, 8)):
            self.statement(k)
        body = "\n".join("    " + line for line in ["acc = 0.0", *self.lines, "return acc"])
        return f"import numpy as np\n\nimport aot\n\n\n@aot.jit\ndef {entry}(a, m, i0, i1):\n{body}\n"


def generate_views(ch: Chooser, entry: str = "entry") -> Program:
    """A random slicing program (``ViewGen``); its entry takes ``VIEW_PARAMS`` and returns a float."""
    return Program(source=ViewGen(ch).generate(entry), entry=entry, params=VIEW_PARAMS, ret=FLOAT)


def view_args(rng: random.Random) -> tuple:
    """Arguments for ``generate_views`` programs: arrays of every layout (C, F, reversed, strided, empty, one
    element) holding NaN and signed zeros, and small ints."""
    import numpy as np

    n = rng.choice([0, 1, 2, 5, 9, 9, 12])
    base = np.array([rng.choice([1.5, -2.0, 0.0, -0.0, math.nan, 7.25, -3.5]) for _ in range(2 * n + 1)])
    a = rng.choice([base[:n].copy(), base[::-2][:n], base[::2][:n]])
    rows, cols = rng.choice([(0, 3), (1, 1), (3, 4), (4, 2), (2, 0), (5, 6), (6, 5), (3, 3)])
    m = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) - 3.5
    m = rng.choice([m, np.asfortranarray(m), m[::-1], m[:, ::-1]])
    return a, m, rng.randint(-4, 4), rng.randint(-3, 3)
