"""Rules of every paper declared with ``declare_paper(...)``: one per stage, plus the paper's target rule."""

for _slug, _stages in PAPER_STAGES.items():
    for _spec in [stage_rule(_slug, _st) for _st in _stages]:
        # Snakemake refuses a benchmark on a rule eligible for the between-workflow cache (a result taken from
        # the cache has no benchmark to fill): cached stages (stage(..., cache=...)) get none; their logs still
        # end with the "done in" line that benchmarks/default_run.py reads.
        if not _spec["cache"]:

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

    rule:
        name:
            rule_name(_slug)
        input:
            paper_targets(_slug),
