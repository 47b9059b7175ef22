"""Literature NMR spectra: NMRShiftDB2 (labelled, atom-assigned) and NMRexp (unassigned literature text).

Two producers end in the same canonical parquet under ``data/spectra/``: ``remote`` downloads the
real files (:mod:`.acquire`), ``embedded`` writes synthetic files in the same formats
(:mod:`.synthetic`); :mod:`.process` runs the real parsers and the paper's filters on either.
"""
