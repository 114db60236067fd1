"""Prefect tasks: thin, coarse wrappers of one library call each (a step or a shard, never a case)."""
