"""Language tags (BCP 47, RFC 5646 section 2.1's `Language-Tag` grammar): the format the AT
Protocol lexicon calls `language` (app.bsky.feed.post `langs`) and the PDS checks.

A standard, not a service's rule: the Bluesky client checks its setting with it and the Bluesky
emulator checks the records it receives with it, so this one module serves both."""

from __future__ import annotations

from mkdocs_syndicate.lazyre import lazy_compile

_GRANDFATHERED = (r"en-GB-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|i-pwn|"
                  r"i-tao|i-tay|i-tsu|sgn-BE-FR|sgn-BE-NL|sgn-CH-DE|art-lojban|cel-gaulish|no-bok|no-nyn|"
                  r"zh-guoyu|zh-hakka|zh-min|zh-min-nan|zh-xiang")
_LANGTAG = (r"(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}(?:-[A-Za-z]{3}){0,2})?|[A-Za-z]{4}|[A-Za-z]{5,8})"  # language
            r"(?:-[A-Za-z]{4})?"                                                      # script
            r"(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"                                         # region
            r"(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*"                          # variants
            r"(?:-[0-9A-WY-Za-wy-z](?:-[A-Za-z0-9]{2,8})+)*"                          # extensions
            r"(?:-x(?:-[A-Za-z0-9]{1,8})+)?")                                         # private use
_TAG = lazy_compile(rf"(?:{_GRANDFATHERED})|(?:{_LANGTAG})|x(?:-[A-Za-z0-9]{{1,8}})+")


def is_language_tag(value: str) -> bool:
    return bool(_TAG.fullmatch(value))
