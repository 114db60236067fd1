"""What an import is asked for and what it reports besides the suite or lab it reads.

Readers of other tools' files meet things Assay cannot carry (a promptfoo ``llm-rubric`` assertion, a DeepEval
``expected_tools`` list); they append a note here instead of dropping them silently, and the CLI prints every
note. ``prompt_var`` names the field that holds the question where a format keeps several (promptfoo ``vars``,
MLflow ``inputs``).
"""

from collections import Counter
from dataclasses import dataclass, field

PROMPT_NAMES = ("question", "query", "input", "prompt")
"""Field names taken as the question, in this order of preference, when ``prompt_var`` is not given."""


@dataclass
class ImportOptions:
    model_key: str = "imported"
    prompt_var: str | None = None
    notes: Counter[str] = field(default_factory=Counter)
    """Things the file holds that the import could not carry, each with how many records had it."""

    def note(self, text: str) -> None:
        self.notes[text] += 1

    def listed_notes(self) -> list[str]:
        """The notes in the order first seen, each with its count of records when more than one."""
        return [text if count == 1 else f"{text} ({count} records)" for text, count in self.notes.items()]
