"""ATLAS protein molecular-dynamics trajectories in the canonical layout ``data/atlas/``.

Two producers end in the same files: ``remote`` downloads per-chain archives from the
ATLAS server (:mod:`.remote`), ``embedded`` arranges real MD shipped in the
MDAnalysisTests package in the ATLAS layout (:mod:`.embedded`); ``local`` reads an ATLAS
layout already on disk. All three then run the same mdtraj preprocessing
(:mod:`.preprocess`): heavy atoms, superposition on frame 0, stride, atom14 float16 and
C-alpha float32 arrays in Angstrom.
"""
