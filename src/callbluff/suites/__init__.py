"""Ready-made suites: each paper's whole protocol written as an editable suite TOML (``callbluff suite``)."""
