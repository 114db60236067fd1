"""Problems, insights and leaderboards: pure builders from a test lab and evaluation results."""

from assay.artifacts.findings.insights import find_insights
from assay.artifacts.findings.leaderboards import leaderboard, leaderboard_markdown
from assay.artifacts.findings.problems import find_problems

__all__ = ["find_insights", "find_problems", "leaderboard", "leaderboard_markdown"]
