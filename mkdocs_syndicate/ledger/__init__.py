"""The ledger: schema v1 (format, fast reader), durable transitions under a lock, the git mirror for CI."""
