"""The plugin's settings schema: one schema for `plugins.syndicate` in mkdocs.yml (or
properdocs.yml) and for syndicate.yml. MkDocs checks each value's type when it loads the config;
ranges, channels and anything needing the site are checked by config.site.options_from, when a
build or a command knows what it is about to do."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.base import ConfigErrors, ConfigWarnings, ValidationError

from mkdocs_syndicate.config import defaults
from mkdocs_syndicate.config.defaults import unknown_setting

if TYPE_CHECKING:
    from mkdocs_syndicate.ledger.gitsettings import GitSettings


class SettingError(ValidationError):
    """A ValidationError that knows its setting's path below the plugin's settings (`git.push`):
    MkDocs would otherwise name only the top-level option."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


class _Flag(base.BaseConfigOption[bool]):
    def __init__(self, default: bool = False) -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise ValidationError("must be true or false")
        return value


class _Name(base.BaseConfigOption[str | None]):
    """A git remote or branch: a non-empty name, or unset."""

    def __init__(self, default: str | None = None) -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: object) -> str | None:
        from mkdocs_syndicate.ledger.gitsettings import git_name_problem  # small: no git machinery

        problem = None if value is None else git_name_problem(value)
        if problem is not None:  # a space in `remote` crashed the ledger's git reads
            raise ValidationError(problem)
        return value  # type: ignore[return-value]


class _Handle(base.BaseConfigOption[str | None]):
    """`fediverse_creator`: a fediverse account (`@user@instance`), or unset."""

    def run_validation(self, value: object) -> str | None:
        from mkdocs_syndicate.content.pagehtml import handle_problem

        problem = None if value is None else handle_problem(value)
        if problem is not None:
            raise ValidationError(problem)
        return value  # type: ignore[return-value]


class _Selector(base.BaseConfigOption[str | None]):
    """`links_selector`: a CSS selector (soupsieve's, as BeautifulSoup's `select`), or unset."""

    def run_validation(self, value: object) -> str | None:
        if value is None:
            return None
        import soupsieve

        try:
            soupsieve.compile(value if isinstance(value, str) else "")
        except soupsieve.SelectorSyntaxError:
            raise ValidationError(f"must be a CSS selector (article, main .content, #post), not {value!r}") from None
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(f"must be a CSS selector (article, main .content, #post), not {value!r}")
        return value


class GitConfig(base.Config):  # type: ignore[no-untyped-call]  # mkdocs' __init_subclass__
    """`git:` keep the ledger in git: commit (and push) every transition, for CI."""

    commit = _Flag()
    push = _Flag()  # implies commit
    remote = _Name("origin")
    branch = _Name()  # default: $GITHUB_REF_NAME, else the checked-out branch

    def settings(self) -> GitSettings:
        from mkdocs_syndicate.ledger.gitsettings import GitSettings  # a sending run's, not every build's

        return GitSettings(
            commit=self.commit or self.push, push=self.push, remote=self.remote or "origin", branch=self.branch
        )


class _Git(c.SubConfig[GitConfig]):
    """`git:` as a SubConfig whose errors name the sub-setting (`git.push`), and which refuses an
    unknown one (a misspelt `psuh: true` would otherwise keep the ledger out of git, silently).
    `git: false` (or empty) means off."""

    def run_validation(self, value: object) -> GitConfig:
        if value is None or value is False:
            value = {}
        if not isinstance(value, dict):
            raise ValidationError("expected a mapping like {commit: true, push: true}")
        unknown = unknown_setting(value, names_of(GitConfig))
        if unknown is not None:
            raise SettingError(unknown[1], f"git.{unknown[0]}")
        config = GitConfig(config_file_path=self._config_file_path)
        config.load_dict(value)
        failed, _warnings = config.validate()
        if failed:
            key, error = failed[0]
            raise SettingError(str(error), f"git.{key}")
        return config


class SyndicateConfig(base.Config):  # type: ignore[no-untyped-call]  # mkdocs' __init_subclass__
    ledger = c.Type(str, default=defaults.DEFAULT_LEDGER)
    mode = c.Choice(defaults.MODES, default="auto")
    posts = c.Optional(c.ListOfItems(c.Type(str)))
    since = c.Optional(c.Type((dt.date, str)))
    max_per_run = c.Optional(c.Type(int))
    sandbox = c.Type(bool, default=False)
    channels = c.Type(dict, default={})
    max_wait = c.Type((int, float), default=defaults.DEFAULT_MAX_WAIT)
    git = _Git(GitConfig)
    wait_until_live = c.Type((bool, int, float), default=False)
    removal_recheck = c.Type((int, float), default=defaults.DEFAULT_REMOVAL_RECHECK)
    stale_after_hours = c.Type((int, float), default=defaults.DEFAULT_STALE_AFTER_HOURS)
    backlog = c.Choice(defaults.BACKLOGS, default=defaults.DEFAULT_BACKLOG)
    backlog_days = c.Type((int, float), default=defaults.DEFAULT_BACKLOG_DAYS)
    hashtags_from = c.ListOfItems(c.Choice(defaults.HASHTAG_SOURCES), default=list(defaults.DEFAULT_HASHTAGS_FROM))
    sandbox_pacing = c.Choice(defaults.SANDBOX_PACINGS, default="fast")
    links = c.Type((bool, str), default="block")
    links_lead = c.Type(str, default="Also on:")
    links_rebuild = c.Type(bool, default=False)
    comments = c.Type(bool, default=False)
    fediverse_creator = _Handle()
    links_selector = _Selector()

    def validate(self) -> tuple[ConfigErrors, ConfigWarnings]:
        """MkDocs' checks, their messages quoting a value read by `!ENV` by its variable's name
        (`Expected one of ... but received: <a token>` must not print the token)."""
        from mkdocs_syndicate.config.envtags import note_env_variables
        from mkdocs_syndicate.redaction import env_named

        unread = note_env_variables(self.config_file_path)
        failed, warnings = super().validate()
        if unread:  # a file MkDocs read whole, over the bound: its !ENV values cannot be named
            failed = [("", ValidationError(unread)), *failed]
        named = [(key, _renamed(error, env_named(str(error)))) for key, error in failed]
        return named, [(key, env_named(text)) for key, text in warnings]


def _renamed(error: Exception, text: str) -> Exception:
    """The same error (its setting path kept) with `text` as its message."""
    if text == str(error):
        return error
    return SettingError(text, error.setting) if isinstance(error, SettingError) else ValidationError(text)


def names_of(schema: type[base.Config]) -> list[str]:
    return [name for name, _ in schema._schema]


def as_errors(
    given: object, errors: ConfigErrors, warnings: ConfigWarnings, *, also_known: tuple[str, ...] = ()
) -> tuple[ConfigErrors, ConfigWarnings]:
    """The schema's verdict, stricter than MkDocs': an unknown setting is an error (MkDocs only
    warns, and a misspelt `chanels:` would mean "no channels", a build that announces nothing),
    and a sub-setting's error is named by its path (`git.push`), not its top-level option."""
    errors = [(getattr(error, "setting", key), error) for key, error in errors]
    known = [*also_known, *names_of(SyndicateConfig)]
    for key in reversed(list(given) if isinstance(given, dict) else []):  # each unknown one, first
        unknown = unknown_setting({key: None}, known)
        if unknown is not None:
            errors.insert(0, (unknown[0], ValidationError(unknown[1])))
            warnings = [w for w in warnings if w[0] != unknown[0]]
    if errors and isinstance(given, dict):  # this stops the build: say what else is wrong now, not a build later
        errors += _the_other_errors(given, errors)
    return errors, warnings


def _the_other_errors(given: dict[str, Any], found: ConfigErrors) -> ConfigErrors:
    """Every error `found` does not hold: MkDocs stops validating at the first wrong setting (six
    wrong settings took six builds), so each other setting is validated alone, and then the values
    of those whose types are right (their ranges, the channels)."""
    from mkdocs_syndicate.config.values import value_problems

    failing = {str(key).partition(".")[0] for key, _ in found}
    more: ConfigErrors = []
    for key in names_of(SyndicateConfig):
        if key in given and key not in failing:
            alone = SyndicateConfig()
            alone.load_dict({key: given[key]})
            wrong, _warnings = alone.validate()
            more += [(getattr(error, "setting", name), error) for name, error in wrong]
    failing |= {str(key).partition(".")[0] for key, _ in more}
    right = {k: v for k, v in given.items() if k not in failing}
    return more + [(str(problem.setting), ValidationError(problem.problem)) for problem in value_problems(right)]
