"""Perturbators (seed 002 "Perturbations"): input variations for robustness testing.

Not built yet: the MRM workflow issue adds the perturbator contract, registry and plugins here.
"""
