"""Parsing (paysdk._parsing): decoding, the streamed list, batches, the GC pause."""
