"""HTTP bounded in time and size, servers' wait hints, waiting for a page to go live."""
