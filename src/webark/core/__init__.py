"""L0: errors, clock, record ids, digests and timestamps shared by every layer."""
