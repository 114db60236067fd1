"""Library code of the MRM workflow steps (no Prefect here: flows/mrm.py orchestrates, tasks/ wrap)."""
