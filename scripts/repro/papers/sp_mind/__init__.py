"""SP-Mind: a tool-using agent for spatial proteomics with a verify-and-revise loop, on SP-Bench-mini."""
