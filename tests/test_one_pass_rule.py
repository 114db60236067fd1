"""Every pass/fail comparison of a score with a threshold calls the one rule (``on_good_side`` in
``assay/models/evaluation.py``): the code is read, and an ordering comparison (<, <=, >, >=) with a threshold on
either side is a finding unless it is one of the few that check something else (a parameter's range, a number's
formatting), each listed here with its reason."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("assay", "evaluators", "perturbators", "artifacts", "tasks", "flows", "deployments")
RULE = ("assay/models/evaluation.py", "on_good_side")

NOT_A_VERDICT = {
    ("assay/testing/conformance/evaluators.py", "low <= metric.threshold <= high"): "a default within the range",
    ("evaluators/context_mean_reciprocal_rank.py", "0.0 <= self.mrr_relevant_chunk_threshold <= 1.0"): "a range",
    ("artifacts/report/headline.py", "abs(threshold) < 100"): "how many digits to print",
}


class _Comparisons(ast.NodeVisitor):
    """Ordering comparisons with a threshold among their operands, each with its innermost enclosing function."""

    def __init__(self, text: str) -> None:
        self.text, self.functions, self.found = text, ["<module>"], []

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _enter

    def visit_Compare(self, node: ast.Compare) -> None:
        if any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops) and any(
            "threshold" in name.lower() for name in _names(node)
        ):
            self.found.append((self.functions[-1], ast.get_source_segment(self.text, node) or ""))
        self.generic_visit(node)


def _names(node: ast.AST) -> list[str]:
    """The variable, attribute and string-key names an expression reads."""
    names = []
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            names.append(part.id)
        elif isinstance(part, ast.Attribute):
            names.append(part.attr)
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            names.append(part.value)
    return names


def comparisons_with_a_threshold() -> list[tuple[str, str, str]]:
    """(file, enclosing function, source) of each ordering comparison whose operands mention a threshold."""
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            visitor = _Comparisons(text)
            visitor.visit(ast.parse(text))
            found += [(path.relative_to(ROOT).as_posix(), name, source) for name, source in visitor.found]
    return found


def test_no_comparison_with_a_threshold_bypasses_the_one_rule() -> None:
    found = comparisons_with_a_threshold()
    inside_the_rule = [item for item in found if (item[0], item[1]) == RULE]
    assert inside_the_rule, "the scan no longer sees the rule itself: it reads nothing"
    others = [item for item in found if (item[0], item[1]) != RULE and (item[0], item[2]) not in NOT_A_VERDICT]
    assert others == [], "call assay.models.evaluation.on_good_side instead:\n" + "\n".join(map(str, others))


def test_each_listed_exception_is_still_in_the_code() -> None:
    seen = {(path, source) for path, _, source in comparisons_with_a_threshold()}
    assert [item for item in NOT_A_VERDICT if item not in seen] == []
