"""Claims, scoring and what a reader sees: claim specs and verdicts, the scoreboard, the papers'
registry and reported numbers, the docs pages' generated blocks and the shared figure style.

A module belongs here when it turns a run's outputs into a verdict, a table, a page or a figure file.
"""
