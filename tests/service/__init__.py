"""The service's side (paysdk._service): records, the store, the answering rules."""
