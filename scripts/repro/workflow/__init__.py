"""The workflow's machinery: what every stage runs inside, whatever the paper.

Config validation, the stage declaration and entry point, code-closure inputs, atomic file writing and
input errors, progress lines, device choice, downloads, manifests and provenance. Nothing here knows a
paper or a metric; a module belongs here when a rule or a stage's plumbing needs it.
"""
