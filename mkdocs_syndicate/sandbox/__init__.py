"""Loopback emulators of the channel APIs, for `sandbox: true`, the tests, and rehearsals."""

from mkdocs_syndicate.sandbox.server import DEFAULT_PUBLIC_BASE, Request, Response, SandboxServer, running_sandbox

__all__ = ["DEFAULT_PUBLIC_BASE", "Request", "Response", "SandboxServer", "running_sandbox"]
