"""Learning shared by several papers: the resumable training loop, small networks and their fit,
stacks of independent members, the neural-operator baselines and the field papers' training helper.

A model or loop belongs here when two or more papers train it; a paper's own model stays in its package.
"""
