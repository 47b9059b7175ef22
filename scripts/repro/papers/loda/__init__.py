"""LoDA: task-driven decomposition of LoRA into general and task-specific subspaces for continual learning
(He et al., ICML 2026, arXiv:2603.00191)."""
