"""Posts and what is said about them: the Post model, messages, portable Markdown, links."""
