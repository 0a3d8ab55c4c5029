"""Yes/no settings given as text: environment variables (DDPLINT_NO_PROJECT, DDPLINT_NO_CACHE,
read by every face) and flake8 config values. Nothing heavy is imported: the flake8 plugin reads
them for files it never parses."""

from __future__ import annotations

import os

# The words configparser (and so flake8's config) takes for a boolean; unset is no.
_TRUE, _FALSE = ("1", "yes", "true", "on"), ("0", "no", "false", "off", "")


class SwitchError(ValueError):
    """A word that is not yes or no; the message, one line, names where it was given."""


def switch(value: str | bool, where: str) -> bool:
    if isinstance(value, bool):
        return value
    word = value.strip().lower()
    if word not in _TRUE and word not in _FALSE:
        raise SwitchError(f"{where} = {value!r}: not a boolean (use true or false, 1 or 0)")
    return word in _TRUE


def env_switch(name: str) -> bool:
    return switch(os.environ.get(name, ""), f"environment variable {name}")
