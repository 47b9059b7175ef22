"""Rules of every paper declared with ``declare_paper(...)``: one per stage, plus the paper's target rule."""

for _slug, _stages in PAPER_STAGES.items():
    for _spec in [stage_rule(_slug, _st) for _st in _stages]:
        # A stage eligible for the between-workflow cache has no benchmark file (Snakemake refuses both on
        # one rule); its log's "done in" line still records its cost.
        if _spec["benchmark"] is None:

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
                group:
                    _spec["group"]
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
                cache: _spec["cache"]
                group:
                    _spec["group"]
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
