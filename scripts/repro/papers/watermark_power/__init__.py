"""Power-calibrated LLM watermarking: KGW green lists, power and distortion formulas, calibration."""
