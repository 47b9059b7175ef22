"""Rules of every paper declared with ``declare_paper(...)``: one per stage, plus the paper's target rule."""

for _slug, _stages in PAPER_STAGES.items():
    for _spec in [stage_rule(_slug, _st) for _st in _stages]:
        if _spec["cache"]:
            # Snakemake refuses a benchmark on a rule eligible for the between-workflow cache (a result taken
            # from the cache has no timings to fill it with): a cached stage's cost is in its log's "done in" line.

            rule:
                name:
                    _spec["name"]
                input:
                    **_spec["input"],
                output:
                    **_spec["output"],
                log:
                    _spec["log"],
                wildcard_constraints:
                    **_spec["wildcard_constraints"],
                cache: _spec["cache"]
                localrule: _spec["localrule"]
                conda:
                    _spec["conda"]
                threads: _spec["threads"]
                resources:
                    **_spec["resources"],
                params:
                    **_spec["params"],
                script:
                    ENTRY

        else:

            rule:
                name:
                    _spec["name"]
                input:
                    **_spec["input"],
                output:
                    **_spec["output"],
                log:
                    _spec["log"],
                benchmark:
                    _spec["benchmark"]
                wildcard_constraints:
                    **_spec["wildcard_constraints"],
                localrule: _spec["localrule"]
                conda:
                    _spec["conda"]
                threads: _spec["threads"]
                resources:
                    **_spec["resources"],
                params:
                    **_spec["params"],
                script:
                    ENTRY

    rule:
        name:
            rule_name(_slug)
        input:
            paper_targets(_slug),
