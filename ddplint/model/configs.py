"""The configuration files a project ships (JSON and YAML) and the value one gives for a key path.

A training script that reads its settings from a file (`cfg = json.load(open(path))`, then
`cfg["train"]["accum_grad"]`) runs with what that file holds: the file the path names where it
is one of the project's, or else one of those the project keeps beside the script. This module
lists them and reads a key path from one: JSON with the standard library, YAML's block
mappings of plain scalars with a reader of its own (the linter depends on no YAML library).
"""

from __future__ import annotations

import json
import re

CONFIG_SUFFIXES = {"json": (".json",), "yaml": (".yaml", ".yml")}
MISSING = object()  # the file holds no value at that key path
MAX_CONFIG_FILES = 500

_YAML_KEY = re.compile(r"^(\s*)(-\s+)?([\w.\-]+|\"[^\"]*\"|'[^']*')\s*:(?:\s+(.*?))?\s*$")


def parse(text: str, kind: str) -> dict | None:
    """The mapping a config file's `text` holds, or None where it cannot be read as one."""
    if kind == "json":
        try:
            found = json.loads(text)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None
    return _yaml_mapping(text)


def lookup(mapping: dict | None, keys: tuple[str, ...]):
    """The value at `keys` of `mapping`; MISSING where a key is absent or a step is no mapping."""
    value: object = mapping
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def _yaml_mapping(text: str) -> dict:
    """The nested block mappings of a YAML text, scalars read as int, float, bool or string.
    The items of a block list of mappings are kept, in order, as a list under the key "-" (a
    key path of names alone reaches none of them; `("callbacks", "-")` gives them all), and a
    value in flow style (`[1, 2]`, `{a: 1}`) as its text."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for line in text.splitlines():
        stripped = line.split(" #", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        match = _YAML_KEY.match(stripped)
        if not stripped.strip() or stripped.strip() in ("---", "..."):
            continue
        if match is None:
            continue
        indent = len(match.group(1))
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if match.group(2):  # `- key: value`: an item of a list, out of reach of string keys
            item: dict = {}
            parent.setdefault("-", []).append(item)
            stack.append((indent, item))
            indent += len(match.group(2))
            parent = item
        key = match.group(3).strip("\"'")
        value = match.group(4)
        if value is None or value == "":
            child: dict = {}
            parent[key] = child
            stack.append((indent, child))
        else:
            parent[key] = _scalar(value)
    return root


def _scalar(text: str):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
