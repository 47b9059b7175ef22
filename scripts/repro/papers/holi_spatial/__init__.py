"""Holi-Spatial: curating raw RGB-D video into 3D instances, boxes, captions and spatial QA (ICML 2026 oral).

The embedded default renders indoor-like scenes assembled from pybullet_data assets, degrades the
renders with stand-ins for the paper's foundation models (monocular depth, open-vocabulary masks) and
runs the paper's curation pipeline: multi-view depth fusion, lifting and iterative merging of per-view
instances, confidence tiers, a rule-based verifier, template captions and two-view spatial QA.
"""
