"""The lifecycle conformance matrix (docs/lifecycle.md): each built-in channel type driven through a
post's life — create, edits of its text and image, a move, a removal, a new life, a thread's
growth and shrinking — against the sandbox's emulators and, where they run here, the real servers;
each event's outcome judged by reading the service's own state afterwards, never the ledger alone.

`life.py` drives the events, `service.py` reads what a service holds, `page.py` writes and reads
the table, `generate.py` is the command that writes docs/lifecycle.md."""
