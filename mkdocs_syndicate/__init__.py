"""mkdocs-syndicate: announce new MkDocs posts, at most (or at least) once per channel."""

__version__ = "0.1.0"
