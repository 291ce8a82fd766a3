"""The I/O-free core (paysdk._core), driven by hand."""
