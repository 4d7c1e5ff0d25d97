"""L1: the WARC/ARC record model, reader, writer and checks (sans network)."""
