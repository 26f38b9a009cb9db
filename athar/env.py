"""Reading settings from the environment: every value is checked, and a value this module
does not understand stops the start-up with a message naming the variable.

A security switch read as ``== "1"`` would take ``true`` for off without a word; here
``true`` means on and ``maybe`` is refused.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def text(name: str, default: str = "") -> str:
    """The variable's value with surrounding spaces removed; ``default`` when unset or empty."""
    value = os.environ.get(name, "").strip()
    return value or default


def boolean(name: str, default: bool = False) -> bool:
    """1/0, true/false, yes/no, on/off in any case; unset or empty gives ``default``."""
    raw = text(name)
    if not raw:
        return default
    if raw.lower() in TRUE:
        return True
    if raw.lower() in FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a yes or no: use one of 1/0, true/false, yes/no, on/off."
    )


def integer(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """A whole number (at least ``minimum``, at most ``maximum``, when given); unset or
    empty gives ``default``."""
    raw = text(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}.")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at most {maximum}.")
    return value


def items(name: str, default: str = "") -> list[str]:
    """A comma-separated list, spaces around items removed, empty items dropped."""
    return [item.strip() for item in text(name, default).split(",") if item.strip()]


def choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices``, exactly; unset or empty gives ``default``."""
    raw = text(name, default)
    if raw not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} must be one of: {', '.join(choices)}.")
    return raw
