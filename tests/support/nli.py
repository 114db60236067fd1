"""An NLI backend for tests: no model weights, a rule a reader can check by hand."""

from assay.evaluators._nli import NliBackend, PairEntailment


class WordOverlapNli(NliBackend):
    """Stands in for an NLI model: entailment 0.9 when every hypothesis word is in the premise, else 0.1."""

    def __init__(self) -> None:
        self.name = "nli:word-overlap"

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[PairEntailment]:
        def words(text: str) -> set[str]:
            return set(text.lower().strip(".").split())

        return [PairEntailment(0.9 if words(hypo) <= words(premise) else 0.1, None) for premise, hypo in pairs]
