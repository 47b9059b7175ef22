"""A corrupted input stops the data rule with a message naming the file and leaves no output; the message
is one block (file, problem, what to do) that ends the run's output, with no traceback unless --verbose."""

from workflow_tools import copy_workflow, snakemake


def test_corrupted_traits_table_fails_clearly_and_leaves_no_output(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    bad = tmp_path / "traits.csv"
    bad.write_text("sample_id,gc_content\ns1,0.5\ns2,abc\n")
    obs = tmp_path / "obs.csv"
    obs.write_text("sample_id,time,state,value\ns1,0,CO2,0\ns2,1,CO2,0.1\n")
    local = f"{{'metagenome': {{'source': 'local', 'local': {{'traits': '{bad}', 'observations': '{obs}'}}}}}}"
    proc = snakemake(work, "--cores", "1", "data/metagenome/manifest.json", "--config", f"data={local}", check=False)
    log = (work / "logs/data/metagenome.log").read_text()
    assert proc.returncode != 0
    assert f"{bad}: trait 'gc_content' of sample 's2' is not a number" in log
    output = proc.stdout + proc.stderr
    assert "Traceback (most recent call last)" not in output
    summary = output[output.index("The run stopped on bad input") :]
    assert f"data error in {bad}" in summary and "problem: trait 'gc_content' of sample 's2'" in summary
    assert "what to do: fix or replace the file" in summary and "rule: metagenome_data" in summary
    assert not (work / "data/metagenome").exists() or not list((work / "data/metagenome").iterdir())
