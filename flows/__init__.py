"""Prefect flows: orchestration only; every step is a task in ``tasks/``."""
