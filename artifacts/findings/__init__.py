"""Problems, insights and leaderboards: pure builders from a test lab and evaluation results."""

from artifacts.findings.insights import find_insights
from artifacts.findings.leaderboards import leaderboard, leaderboard_markdown
from artifacts.findings.problems import find_problems

__all__ = ["find_insights", "find_problems", "leaderboard", "leaderboard_markdown"]
