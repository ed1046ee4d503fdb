"""NIP-19's bech32 names of Nostr keys and events (`npub1…`, `nsec1…`, `note1…`, `naddr1…`):
the encoding of BIP-173 (NIP-19 uses bech32, not bech32m). It is a few lines, written here from
the BIP rather than taken from an unmaintained package, and shared by the Nostr client (a
config's key, a copy's link) and its emulator (the sandbox's public page at that link)."""

from __future__ import annotations

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _polymod(values: list[int]) -> int:
    check = 1
    for value in values:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ value
        for i, generator in enumerate(_GENERATOR):
            check ^= generator if (top >> i) & 1 else 0
    return check


def _expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert(data: bytes | list[int], from_bits: int, to_bits: int, pad: bool) -> list[int] | None:
    acc, bits, out, most = 0, 0, [], (1 << to_bits) - 1
    for value in data:
        acc = (acc << from_bits) | value
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            out.append((acc >> bits) & most)
    if pad and bits:
        out.append((acc << (to_bits - bits)) & most)
    elif not pad and (bits >= from_bits or (acc << (to_bits - bits)) & most):
        return None
    return out


def bech32_encode(hrp: str, data: bytes) -> str:
    words = _convert(data, 8, 5, True) or []
    check = _polymod([*_expand(hrp), *words, 0, 0, 0, 0, 0, 0]) ^ 1
    words += [(check >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[w] for w in words)


def bech32_decode(text: str) -> tuple[str, bytes] | None:
    """(prefix, bytes), or None when `text` is not valid bech32 (a typo breaks its checksum)."""
    if text.lower() != text and text.upper() != text:
        return None
    text = text.lower()
    hrp, sep, rest = text.rpartition("1")
    if not sep or not hrp or len(rest) < 6 or any(c not in _CHARSET for c in rest):
        return None
    words = [_CHARSET.index(c) for c in rest]
    if _polymod([*_expand(hrp), *words]) != 1:
        return None
    data = _convert(words[:-6], 5, 8, False)
    return None if data is None else (hrp, bytes(data))


def note_name(event_id: str) -> str:
    """`note1…`: a note's event id as NIP-19 names it (what a web gateway's link takes)."""
    return bech32_encode("note", bytes.fromhex(event_id))


def naddr_name(kind: int, author: str, identifier: str, relay: str = "") -> str:
    """`naddr1…`: an addressable event's coordinate (kind, author, `d` tag) as NIP-19's TLV: type
    0 the identifier, 1 a relay, 2 the author's 32 bytes, 3 the kind as 4 big-endian bytes."""

    def tlv(kind_of: int, value: bytes) -> bytes:
        return bytes([kind_of, len(value)]) + value

    data = tlv(0, identifier.encode()) + (tlv(1, relay.encode()) if relay else b"")
    data += tlv(2, bytes.fromhex(author)) + tlv(3, kind.to_bytes(4, "big"))
    return bech32_encode("naddr", data)
