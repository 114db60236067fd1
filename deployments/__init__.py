"""Prefect deployments: serve entry points and schedules for the flows."""
