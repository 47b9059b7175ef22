"""The columns of NMRexp's published parquet table (Zenodo doi:10.5281/zenodo.17296666), in their order:
one list for the embedded generator that writes the layout and for the rehearsal's fixture writer (a module
without RDKit, so the fixture runs in the core env)."""

COLUMNS = [
    "filename",
    "smiles",
    "page_in_file_smiles",
    "nmr_type",
    "nmr_shift",
    "nmr_processed",
    "nmr_frequency",
    "nmr_solvent",
    "nmr_note",
    "location_in_page_smiles",
    "location_in_page_para",
    "atom_number",
    "atom_number_diff_env",
    "atom_number_abstract",
]
