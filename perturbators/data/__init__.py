"""Offline data for perturbators (word lists); plain Python so it ships with the package and loads fast."""
