"""jsonpath-ng's extended JSON paths with the user's regexes on ``assay.bounded_regex``.

jsonpath-ng runs a ``[?(@.name =~ "...")]`` filter with plain ``re.search`` (``(a+)+$`` on a long value ran
for minutes, doubling per character) and ``sub(/regex/, repl)`` with ``re.sub``. Rather than patching the
library, a subclass of its parser wraps the two grammar productions that take a regex and builds nodes whose
matching is bounded; the grammar, the parse tables and every other node stay jsonpath-ng's own. A pattern
that cannot be used fails when the path is parsed, a match that runs out of time when it is applied, both as
``PatternError``.
"""

from typing import Any

from jsonpath_ng import DatumInContext, JSONPath
from jsonpath_ng.ext.filter import Expression
from jsonpath_ng.ext.parser import ExtendedJsonPathParser
from jsonpath_ng.ext.string import Sub

from assay import bounded_regex


class BoundedRegexFilter(Expression):
    """``target =~ "pattern"``: the values found at ``target`` that are strings the pattern matches."""

    def find(self, datum: Any) -> list[DatumInContext]:
        found = self.target.find(DatumInContext.wrap(datum))
        return [
            match for match in found if isinstance(match.value, str) and bounded_regex.search(self.value, match.value)
        ]


class BoundedSub(Sub):
    """``sub(/regex/, repl)`` on the bounded engine: the substituted string, or nothing when it is unchanged."""

    def __init__(self, method: str) -> None:
        super().__init__(method)
        bounded_regex.compile_pattern(self.expr)

    def find(self, datum: Any) -> list[DatumInContext]:
        datum = DatumInContext.wrap(datum)
        value = bounded_regex.sub(self.expr, self.repl, datum.value)
        return [] if value == datum.value else [DatumInContext.wrap(value)]


class _BoundedParser(ExtendedJsonPathParser):
    """PLY finds grammar actions by name, so these overrides replace the library's; each keeps its grammar
    docstring and only swaps the node the library built."""

    def p_expression(self, p: Any) -> None:
        super().p_expression(p)
        node = p[0]
        if isinstance(node, Expression) and node.op == "=~":
            if isinstance(node.value, str):
                bounded_regex.compile_pattern(node.value)
            p[0] = BoundedRegexFilter(node.target, node.op, node.value)

    p_expression.__doc__ = ExtendedJsonPathParser.p_expression.__doc__

    def p_jsonpath_named_operator(self, p: Any) -> None:
        super().p_jsonpath_named_operator(p)
        if isinstance(p[0], Sub):
            p[0] = BoundedSub(p[0].method)

    p_jsonpath_named_operator.__doc__ = ExtendedJsonPathParser.p_jsonpath_named_operator.__doc__


def parse_bounded(path: str) -> JSONPath:
    """The parsed path; jsonpath-ng's ``JSONPathError`` for bad syntax, ``PatternError`` for a bad regex."""
    return _BoundedParser().parse(path)
