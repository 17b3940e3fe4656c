"""How a call's arguments bind to a function's parameters: Python's rules, in one place.

    sig = Parameters.of(f)                 # def f(x, y=2.0, *, tol=None): read from the code object once
    sig.plan(1, ("tol",))                  → (0, DEFAULT, 1)   (x ← argument 0, y ← its default, tol ← argument 1)
    sig.plan(0, ())                        → "f() missing 1 required positional argument: 'x'"

A compiled method takes every parameter by position, keyword-only ones last (``params`` order). A *plan* maps
a call's shape (how many positional arguments, which keyword names) to, for each parameter, the index of the
argument that fills it (positional ones first, then the keywords in the order written) or ``DEFAULT``; a call
that Python would reject gets Python's message instead. Inference binds compiled calls with it at compile
time (``aot.infer.calls``), and the runtime binds calls from Python with keywords or left-out defaults with it
(``aot.runtime.dispatch``): plans are remembered per call shape, so a call costs a dict lookup and a tuple.
Pure Python, no imports: the runtime reads it on first calls.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: the runtime imports no ``typing``)
if TYPE_CHECKING:
    from typing import Any

DEFAULT = -1
"""In a plan: the parameter takes its default value."""

_MISSING: Any = type("NoDefault", (), {"__repr__": lambda self: "<no default>"})()


def _names_list(names: list[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b', and 'c'`` (as CPython lists missing arguments)."""
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


class Parameters:
    """A function's parameters as a compiled method takes them, and their current defaults."""

    __slots__ = ("name", "params", "npos", "nposonly", "defaults", "index", "plans", "gathers", "variadic", "_source")

    def __init__(self, func: Any):
        code = func.__code__
        self.name = getattr(code, "co_qualname", code.co_name)  # (CPython names functions so in its messages)
        self.npos = code.co_argcount
        self.nposonly = code.co_posonlyargcount
        self.variadic = bool(code.co_flags & 0x0C)  # CO_VARARGS | CO_VARKEYWORDS
        self.params: tuple[str, ...] = code.co_varnames[: self.npos + code.co_kwonlyargcount]
        defaults = func.__defaults__ or ()
        kwdefaults = func.__kwdefaults__ or {}
        values = [_MISSING] * len(self.params)
        values[self.npos - len(defaults) : self.npos] = defaults
        for i in range(self.npos, len(self.params)):
            values[i] = kwdefaults.get(self.params[i], _MISSING)
        self.defaults: tuple[Any, ...] = tuple(values)
        # Names that may be passed by keyword (not positional-only ones), and their positions.
        self.index = {name: i for i, name in enumerate(self.params) if i >= self.nposonly}
        self.plans: dict[tuple[int, tuple[str, ...]], tuple[int, ...] | str] = {}
        self.gathers: dict[tuple[int, tuple[str, ...]], Any] = {}  # (see ``bind``)
        self._source = (func.__defaults__, func.__kwdefaults__)

    @classmethod
    def of(cls, func: Any) -> Parameters:
        """The parameters of ``func``, remembered for it until its defaults are reassigned."""
        if not _KNOWN:
            from weakref import WeakKeyDictionary  # (on a first call: not on the way to ``import aot``)

            _KNOWN.append(WeakKeyDictionary())
        known = _KNOWN[0].get(func)
        if known is not None and known.holds_for(func):
            return known
        made = _KNOWN[0][func] = cls(func)
        return made

    def holds_for(self, func: Any) -> bool:
        """Whether these are still ``func``'s parameters (its defaults were not reassigned since)."""
        return self._source[0] is func.__defaults__ and self._source[1] is func.__kwdefaults__

    def has_default(self, i: int) -> bool:
        return self.defaults[i] is not _MISSING

    def default(self, name: str, missing: Any = None) -> Any:
        """The current default of parameter ``name``, or ``missing`` when it has none."""
        i = self.params.index(name) if name in self.params else -1
        return missing if i < 0 or not self.has_default(i) else self.defaults[i]

    def plan(self, npositional: int, keywords: tuple[str, ...]) -> tuple[int, ...] | str:
        """For each parameter, the index of the argument that fills it or ``DEFAULT``; or Python's message
        for a call it would reject."""
        key = (npositional, keywords)
        found = self.plans.get(key)
        if found is None:
            found = self.plans[key] = self._plan(npositional, keywords)
        return found

    def _plan(self, npositional: int, keywords: tuple[str, ...]) -> tuple[int, ...] | str:
        n = len(self.params)
        slots = [DEFAULT - 1] * n  # (not yet filled)
        for i in range(min(npositional, self.npos)):
            slots[i] = i
        for k, name in enumerate(keywords):  # (in CPython's order: keywords first, then the counts)
            found = self.index.get(name)
            if found is None:
                posonly = [n for n in keywords if n in self.params[: self.nposonly]]
                if posonly:
                    return (
                        f"{self.name}() got some positional-only arguments passed as keyword arguments: "
                        f"'{', '.join(posonly)}'"  # (CPython quotes the list once)
                    )
                return f"{self.name}() got an unexpected keyword argument {name!r}"
            if slots[found] != DEFAULT - 1:
                return f"{self.name}() got multiple values for argument {name!r}"
            slots[found] = npositional + k
        if npositional > self.npos:
            return self._too_many(npositional, keywords)
        missing_pos = [self.params[i] for i in range(self.npos) if slots[i] == DEFAULT - 1 and not self.has_default(i)]
        if missing_pos:
            s = "s" if len(missing_pos) > 1 else ""
            return (
                f"{self.name}() missing {len(missing_pos)} required positional argument{s}: {_names_list(missing_pos)}"
            )
        missing_kw = [
            self.params[i] for i in range(self.npos, n) if slots[i] == DEFAULT - 1 and not self.has_default(i)
        ]
        if missing_kw:
            s = "s" if len(missing_kw) > 1 else ""
            return (
                f"{self.name}() missing {len(missing_kw)} required keyword-only argument{s}: {_names_list(missing_kw)}"
            )
        return tuple(DEFAULT if s == DEFAULT - 1 else s for s in slots)

    def _too_many(self, npositional: int, keywords: tuple[str, ...]) -> str:
        required = sum(1 for i in range(self.npos) if not self.has_default(i))
        if required < self.npos:
            takes = f"from {required} to {self.npos} positional arguments"
        else:
            takes = f"{self.npos} positional argument{'s' if self.npos != 1 else ''}"
        kwonly_given = sum(1 for name in keywords if self.index.get(name, -1) >= self.npos)
        given = f"{npositional} positional argument{'s' if npositional != 1 else ''}"
        if kwonly_given:
            given += f" (and {kwonly_given} keyword-only argument{'s' if kwonly_given != 1 else ''})"
            return f"{self.name}() takes {takes} but {given} were given"
        return f"{self.name}() takes {takes} but {npositional} {'was' if npositional == 1 else 'were'} given"

    def bind(self, args: tuple, kwargs: dict) -> tuple | None:
        """The arguments of a call from Python in parameter order, defaults filled in; None when Python would
        reject the call (calling the function itself then raises Python's own error)."""
        if self.variadic:  # (*args or **kwargs: not compiled; compiling says so, with where)
            return args + tuple(kwargs.values())
        shape = (len(args), tuple(kwargs))
        gather = self.gathers.get(shape)
        if gather is None:
            gather = self.gathers[shape] = self._gather(shape[0] + len(shape[1]), self.plan(*shape))
        if gather is False:
            return None
        return gather(args + tuple(kwargs.values()) + self.defaults if kwargs else args + self.defaults)

    def _gather(self, nvalues: int, plan: tuple[int, ...] | str) -> Any:
        """What picks a call's arguments, in parameter order, out of its values followed by the defaults
        (``False`` for a call Python rejects)."""
        if isinstance(plan, str):
            return False
        picks = [j if j != DEFAULT else nvalues + i for i, j in enumerate(plan)]
        if len(picks) == 1:
            return lambda values: (values[picks[0]],)
        if not picks:
            return lambda values: ()
        from operator import itemgetter  # (on a call with keywords: not on the way to ``import aot``)

        return itemgetter(*picks)


_KNOWN: list = []  # [the WeakKeyDictionary of every function's Parameters], made on first use
