"""Meta-evaluation: how well an evaluator's scores agree with labels people gave (outcomes analysis)."""
