"""The ``assay`` command line. Heavy libraries are imported inside commands so ``--help`` starts fast."""
