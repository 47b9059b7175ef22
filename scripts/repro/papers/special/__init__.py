"""SPECIAL: FedAvg with a server-side proximal anchor for federated domain-incremental learning under partial
participation (Xu and Li, ICML 2026, arXiv:2601.22274)."""
