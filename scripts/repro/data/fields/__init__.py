"""Gridded fields (PDE trajectories, radar echoes) in one canonical zarr layout: simulators and readers."""
