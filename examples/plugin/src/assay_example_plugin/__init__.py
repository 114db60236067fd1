"""An example Assay plugin: the evaluator ``mentions_question_terms`` and the perturbator ``uppercase_words``.

Assay loads them through the entry points in ``pyproject.toml``; nothing here registers them by hand."""
