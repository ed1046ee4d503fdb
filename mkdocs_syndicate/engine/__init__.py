"""The engine: the pending query, the outcome policy, the runner and its pacing, one run without MkDocs."""
