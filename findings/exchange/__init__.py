"""Review exchange: reading and writing review bundles (and, later, other formats)."""
