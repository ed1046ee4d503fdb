"""Announcement text: sandboxed Jinja2 templates, fitted to a length rule the channel gives
(each service's own counting, and where it ends a link, live in its client).

When a message is too long, the description is shortened first, then the title, each with an
ellipsis; the URL is never touched. Titles and descriptions have @ and # neutralised (a zero-width
space after them) so a title like "Why #1 matters to @bob" creates no hashtag and pings nobody;
`hashtags` (built from the post's tags) is the way to ask for real ones.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.content.textcut import grapheme_length, shorten
from mkdocs_syndicate.errors import ConfigError, PostError
from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.safety import public_text

_ZWSP = "\u200b"


if TYPE_CHECKING:
    import jinja2


# A message template is a setting anyone with write access to the config can change, and it runs
# on every build: `{{ title * 10000000 }}` took 44 s and 1.1 GB. Bounds, checked while rendering
# (never after): a rendered message, and every value a template makes on the way, holds at most
# MAX_RENDERED characters; a count or width passed to a filter or method at most that; `range`
# at most MAX_LOOP items; and a template has no macros or recursive loops (recursion) and no loop
# inside a loop. Integers are bounded too: `{{ ((9**64)**64)**64 }}` or a namespace squared in a
# loop never finished, so `*`, `**`, `+` and `-` refuse a result of more than MAX_INT_BITS bits
# from the sizes of their operands, before computing it.
MAX_RENDERED = 20_000  # the longest message any channel takes (Weibo's 2,000) ten times over
MAX_LOOP = 1_000
MAX_INT_BITS = 4_096


class TemplateTooLarge(Exception):
    pass


def _bounded(value: Any) -> Any:
    if isinstance(value, (str, list, tuple, bytes)) and len(value) > MAX_RENDERED:
        raise TemplateTooLarge(f"a value of more than {MAX_RENDERED} characters")
    return value


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_result_bits(operator: str, left: Any, right: Any) -> int:
    """At most how many bits `left <operator> right` has, for two integers (0 otherwise)."""
    if not (_whole(left) and _whole(right)):
        return 0
    if operator == "*":
        return int(left.bit_length() + right.bit_length())
    if operator == "**":
        return int(left.bit_length() * max(right, 0)) if abs(left) > 1 else 1
    if operator in ("+", "-"):
        return int(max(left.bit_length(), right.bit_length()) + 1)
    return 0


def _bounded_int(operator: str, left: Any, right: Any) -> None:
    bits = _int_result_bits(operator, left, right)
    if bits > MAX_INT_BITS:
        raise TemplateTooLarge(f"a number of about {bits} bits with '{operator}' (at most {MAX_INT_BITS})")


def _bounded_args(args: Any, kwargs: Any) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RENDERED:
            raise TemplateTooLarge(f"a count or width of {value} (at most {MAX_RENDERED})")


_PERCENT_WIDTH = lazy_compile(r"%[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")


def _before(name: str, args: Any, kwargs: Any) -> None:
    """What would be too large, refused before it is made: the few operations whose result can
    be far larger than their bounded inputs (replace, indent, join, %-formatting)."""
    _bounded_args(args, kwargs)
    values = [a for a in args if not hasattr(a, "environment")]  # without jinja's context argument
    check = _SIZED.get(name)
    if check is not None:
        check(values, kwargs)


def _sized_replace(values: list[Any], kwargs: Any) -> None:
    if len(values) >= 3 and all(isinstance(v, str) for v in values[:3]):
        text, old, new = values[:3]
        hits = (len(text) + 1) if old == "" else text.count(old)
        if len(text) + hits * (len(new) - len(old)) > MAX_RENDERED:
            raise TemplateTooLarge(f"a replace of more than {MAX_RENDERED} characters")


def _sized_indent(values: list[Any], kwargs: Any) -> None:
    if values and isinstance(values[0], str):
        width = kwargs.get("width", values[1] if len(values) > 1 else 4)
        size = len(width) if isinstance(width, str) else int(width) if isinstance(width, int) else 0
        if len(values[0]) + (values[0].count("\n") + 1) * size > MAX_RENDERED:
            raise TemplateTooLarge(f"an indent of more than {MAX_RENDERED} characters")


def _sized_join(values: list[Any], kwargs: Any) -> None:
    if len(values) >= 2:
        # str.join(items) arrives as (separator, items); the join filter as (items, separator).
        separator, items = (values[0], values[1]) if isinstance(values[0], str) else (values[1], values[0])
        if isinstance(separator, str) and hasattr(items, "__len__") and len(separator) * len(items) > MAX_RENDERED:
            raise TemplateTooLarge(f"a join of more than {MAX_RENDERED} characters")


def _sized_format(values: list[Any], kwargs: Any) -> None:
    if values and isinstance(values[0], str):
        _bounded_percent(values[0])


_SIZED: dict[str, Callable[[list[Any], Any], None]] = {
    "replace": _sized_replace,
    "indent": _sized_indent,
    "join": _sized_join,
    "format": _sized_format,
}


def _bounded_percent(form: str) -> None:
    for match in _PERCENT_WIDTH.finditer(form):
        for number in match.groups():
            if number == "*" or (number and int(number) > MAX_RENDERED):
                raise TemplateTooLarge(f"a %-format width of {number} (at most {MAX_RENDERED}, no '*')")


def _bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_LOOP:
        raise TemplateTooLarge(f"a range of {len(numbers)} items (at most {MAX_LOOP})")
    return numbers


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)  # keeps jinja's pass_context/pass_environment marks
    def call(*args: Any, **kwargs: Any) -> Any:
        _before(name, args, kwargs)
        return _bounded(function(*args, **kwargs))

    return call


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    # Templates are loaded only when a message is made: a build that sends nothing imports none of it.
    import jinja2.compiler
    import jinja2.sandbox

    class BoundedEnvironment(jinja2.sandbox.SandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "+", "-", "//", "%"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "**" and isinstance(right, (int, float)) and abs(right) > 64:
                raise TemplateTooLarge(f"an exponent of {right} (at most 64)")
            _bounded_int(operator, left, right)
            if operator == "%" and isinstance(left, str):
                _bounded_percent(left)
            if operator == "*":
                for value, count in ((left, right), (right, left)):
                    if (
                        isinstance(value, (str, list, tuple))
                        and isinstance(count, int)
                        and len(value) * count > MAX_RENDERED
                    ):
                        raise TemplateTooLarge(f"a value of {len(value) * count} characters")
            return _bounded(super().call_binop(context, operator, left, right))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(getattr(__obj, "__self__", None), str):
                _before(getattr(__obj, "__name__", ""), (__obj.__self__, *args), kwargs)
            else:
                _bounded_args(args, kwargs)
            return _bounded(super().call(__context, __obj, *args, **kwargs))

        def wrap_str_format(self, value: Any) -> None:
            if getattr(value, "__name__", "") in ("format", "format_map") and isinstance(
                getattr(value, "__self__", None), str
            ):  # widths hide inside the format string
                raise TemplateTooLarge("a call of str.format (use the 'format' filter)")
            return None

        @staticmethod
        def bounded_join(pieces: tuple[Any, ...]) -> str:  # `a ~ b`, compiled to this (below)
            return str(_bounded("".join(map(str, pieces))))

    class BoundedCodeGenerator(jinja2.compiler.CodeGenerator):
        def visit_Concat(self, node: Any, frame: Any) -> None:
            self.write("environment.bounded_join((")
            for piece in node.nodes:
                self.visit(piece, frame)
                self.write(", ")
            self.write("))")

    BoundedEnvironment.code_generator_class = BoundedCodeGenerator
    environment = BoundedEnvironment(autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)
    environment.filters = {name: _bounded_filter(name, f) for name, f in environment.filters.items()}
    environment.globals = {"range": _bounded_range, "namespace": environment.globals["namespace"]}
    return environment


def compile_template(source: str, where: str) -> jinja2.Template:
    import jinja2

    environment = _environment()
    try:
        _refuse_unbounded_shapes(environment.parse(source), where)
        template: jinja2.Template = environment.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"template error on line {exc.lineno}: {exc.message}", where) from None
    return template


@functools.lru_cache(maxsize=64)
def _compiled(source: str, where: str) -> jinja2.Template:
    """A channel's template compiled once per run, not once per message: compiling was 80 % of
    making a message, and a run makes one per (post, channel) to tell which copies are out of date."""
    return compile_template(source, where)


def _refuse_unbounded_shapes(tree: Any, where: str) -> None:
    """Macros and recursive loops (which may call themselves) and a loop inside a loop multiply
    work past any bound a single step can check; a message needs none of them."""
    from jinja2 import nodes

    for kind in (nodes.Macro, nodes.CallBlock, nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends):
        found = tree.find(kind)
        if found is not None:
            raise ConfigError(
                f"template line {found.lineno}: '{kind.__name__.lower()}' is not available in message templates",
                where,
            )
    for loop in tree.find_all(nodes.For):
        if loop.recursive:
            raise ConfigError(
                f"template line {loop.lineno}: a recursive loop is not available in message templates", where
            )
        inner = next(
            (
                n
                for part in (*loop.body, *loop.else_)
                for n in [part, *part.find_all(nodes.For)]
                if isinstance(n, nodes.For)
            ),
            None,
        )
        if inner is not None:
            raise ConfigError(
                f"template line {inner.lineno}: a loop inside a loop is not available in message templates", where
            )


def _render_bounded(template: jinja2.Template, values: dict[str, Any]) -> str:
    """The template's text, stopped as soon as it passes MAX_RENDERED characters."""
    pieces, size = [], 0
    for piece in template.generate(values):
        size += len(piece)
        if size > MAX_RENDERED:
            raise TemplateTooLarge(f"more than {MAX_RENDERED} characters")
        pieces.append(piece)
    return "".join(pieces)


def neutralise(text: str) -> str:
    return text.replace("@", "@" + _ZWSP).replace("#", "#" + _ZWSP)


def hashtag(tag: str) -> str:
    """'Open Source' → '#OpenSource'; '' when nothing usable is left."""
    import regex

    words = regex.findall(r"[\p{L}\p{N}_]+", tag)
    joined = "".join(w[:1].upper() + w[1:] if len(words) > 1 else w for w in words)
    return f"#{joined}" if joined else ""


@dataclass(frozen=True)
class LengthRule:
    limit: int
    measure: Callable[[str], int]
    unit: str = "characters"


@dataclass(frozen=True)
class Message:
    text: str
    length: int
    limit: int | None
    notes: tuple[str, ...] = ()  # what was changed to fit the channel's rules, for a warning
    unit: str = "characters"  # what `length` counts, as people read it
    parts: tuple[str, ...] = ()  # a thread's texts, the first being `text` (empty: one message)

    @property
    def sha256(self) -> str:
        """The hash of what is sent: the text, or a thread's parts (each part has its own too)."""
        return message_sha256(self.text) if not self.parts else thread_sha256(self.parts)

    @property
    def texts(self) -> tuple[str, ...]:
        """What is posted, in order: one text, or a thread's parts."""
        return self.parts or (self.text,)


def message_sha256(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def thread_sha256(parts: tuple[str, ...]) -> str:
    """A thread's hash: its parts, each framed by its length (no two threads share one)."""
    return message_sha256("".join(f"{len(part)}:{part}" for part in parts))


_ENDS_A_LINK = ".,;:!?)"  # trailing punctuation every service's linker leaves out of a link


def set_url_apart(text: str, url: str) -> str:
    """A space after the post URL wherever what follows it could be read as part of it: linkers
    differ on "。", "、", "）" or letters (Mastodon's takes any non-space character into a path),
    and a link that swallowed them is not the post's URL, so a read could never find the post."""
    pieces = text.split(url)
    for index in range(1, len(pieces)):
        after = pieces[index]
        if not after or after[0].isspace():
            continue
        if after[0] in _ENDS_A_LINK and (len(after) == 1 or after[1].isspace()):
            continue
        pieces[index] = " " + after
    return url.join(pieces)


def render_message(
    post: Post,
    channel_id: str,
    template_source: str,
    rule: LengthRule | None,
    site_name: str,
    *,
    where: str,
    neutraliser: Callable[[str], str] = neutralise,
    with_hashtags: bool = True,
    max_hashtag: int | None = None,
    max_parts: int = 1,
    thread_text: str = "post",
) -> Message:
    """The exact text for (post, channel); a PostError if it cannot be made to fit. With
    `max_parts` above 1 (the channel's `thread: true`), a post over the limit becomes a thread
    (`Message.parts`, of the text `thread_text` chooses) instead of a shortened text."""
    override = post.override(channel_id)
    if override is not None and override.text is not None:
        return _as_written(post, channel_id, override.text, rule, max_parts)

    from jinja2 import TemplateError

    template = _compiled(template_source, where)
    # Inputs bounded as every value a template makes is (a description longer than any message
    # loses nothing: it would be shortened to fit anyway), and without the control characters and
    # bidi overrides a feed may carry (an escape sequence, a reversed line in a public post).
    title = neutraliser(shorten(public_text(post.title), MAX_RENDERED // 2))
    description = neutraliser(shorten(public_text(post.summary), MAX_RENDERED // 2))
    tags = [public_text(tag) for tag in post.tags]
    hashtags, notes = _hashtags(post, channel_id, with_hashtags, max_hashtag)

    def render(t: str, d: str, part: int = 1, parts: int = 1) -> str:
        try:
            return set_url_apart(
                _tidy(
                    _render_bounded(
                        template,
                        dict(
                            title=t,
                            description=d,
                            url=post.url,
                            tags=tags,
                            hashtags=hashtags,
                            date=post.date.date().isoformat(),
                            site_name=public_text(site_name),
                            part=part,
                            parts=parts,
                        ),
                    )
                ),
                post.url,
            )
        except TemplateTooLarge as exc:
            raise PostError(
                f"{where}: cannot render for {post.source}: the template makes {exc}; "
                f"a message template may make at most {MAX_RENDERED} characters"
            ) from None
        except TemplateError as exc:
            raise PostError(f"{where}: cannot render for {post.source}: {exc}") from None
        except Exception as exc:
            raise PostError(f"{where}: cannot render for {post.source}: {type(exc).__name__}: {exc}") from None

    if rule is None:
        text = render(title, description)
        return Message(text, len(text), None, notes)
    if max_parts > 1:  # a thread carries the whole post (content/threadtext.py)
        from mkdocs_syndicate.content import threadtext

        text = threadtext.chosen(post, thread_text, description, neutraliser, MAX_RENDERED // 2)
        marked, before = "parts" in _variables(template_source), post.thread_parts.get(channel_id, ())
        parts, cut = threadtext.threaded(render, title, text, rule.limit, rule.measure, max_parts, marked, before)
        if len(parts) > 1:
            more = (f"{post.source}: the {channel_id} thread holds {max_parts} parts at most; the last is cut",)
            return Message(
                parts[0], rule.measure(parts[0]), rule.limit, notes + (more if cut else ()), rule.unit, tuple(parts)
            )
    text, length = _fitted(render, title, description, rule)
    if length > rule.limit:
        raise PostError(
            f"{post.source}: the {channel_id} message is {length} {rule.unit} even with "
            f"title and description removed (limit {rule.limit}); shorten the template"
        )
    return Message(text, length, rule.limit, notes)


def _variables(template_source: str) -> set[str]:
    """The variables a template reads."""
    from jinja2 import meta

    return set(meta.find_undeclared_variables(_environment().parse(template_source)))


def _as_written(post: Post, channel_id: str, text: str, rule: LengthRule | None, max_parts: int = 1) -> Message:
    """The author's own text for this channel (front matter), tidied, never shortened; the post's
    URL set apart from what follows it, as in a template's message. On a channel with threads, a
    text over the limit is split; its first part must hold the post's URL (a read finds it by it)."""
    text = set_url_apart(_tidy(public_text(text)), post.url)
    length = rule.measure(text) if rule else len(text)
    if rule and length > rule.limit and max_parts > 1:
        from mkdocs_syndicate.content.threads import split

        parts, cut = split(text, rule.limit, rule.measure, max_parts)
        if cut or (post.url in text and post.url not in parts[0]):
            why = f"more than {max_parts} parts" if cut else "its first part would not hold the post's URL"
            raise PostError(
                f"{post.source}: front matter 'syndicate.{channel_id}.text' is {length} {rule.unit}: as a "
                f"thread of parts of at most {rule.limit}, {why}; shorten it or move the URL up"
            )
        return Message(parts[0], rule.measure(parts[0]), rule.limit, (), rule.unit, tuple(parts))
    if rule and length > rule.limit:
        raise PostError(
            f"{post.source}: front matter 'syndicate.{channel_id}.text' is {length} "
            f"{rule.unit}, over {channel_id}'s limit of {rule.limit}"
        )
    return Message(text, length, rule.limit if rule else None)


def _hashtags(post: Post, channel_id: str, with_hashtags: bool, max_hashtag: int | None) -> tuple[str, tuple[str, ...]]:
    """The post's tags as hashtags, and a note for each left out as longer than the service takes."""
    tags = [h for h in map(hashtag, post.tags) if h] if with_hashtags else []
    if max_hashtag is None:
        return " ".join(tags), ()
    too_long = [h for h in tags if grapheme_length(h) - 1 > max_hashtag]
    notes = tuple(
        f"{post.source}: hashtag {h[:20]}… is longer than {channel_id}'s {max_hashtag} characters; left out"
        for h in too_long
    )
    return " ".join(h for h in tags if h not in too_long), notes


def _fitted(render: Callable[[str, str], str], title: str, description: str, rule: LengthRule) -> tuple[str, int]:
    """Shorten the description, then the title, by exactly the overflow; repeat because a
    template may use a variable twice. The text and its length (still over: nothing left to cut)."""
    text = render(title, description)
    length = rule.measure(text)
    for field in ("description", "title"):
        while length > rule.limit:
            current = description if field == "description" else title
            size = grapheme_length(current)
            if size == 0:
                break
            keep = max(0, size - (length - rule.limit) - 1)
            shorter = shorten(current, keep) if keep > 1 else ""
            if field == "description":
                description = shorter
            else:
                title = shorter
            text = render(title, description)
            length = rule.measure(text)
    return text, length


def _tidy(text: str) -> str:
    """Trim each line, collapse runs of blank lines (left by empty variables), strip the ends."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
