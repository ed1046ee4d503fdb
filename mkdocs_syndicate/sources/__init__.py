"""Where posts come from: a built MkDocs site, the saved manifest of the last build."""
