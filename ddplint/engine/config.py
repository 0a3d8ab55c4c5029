"""`[tool.ddplint]` in pyproject.toml: which rules run where, which files are skipped.

The nearest pyproject.toml with a `[tool.ddplint]` table, looking up from the linted path (or
the current folder), is used; `--config PATH` names one, `--isolated` ignores them all. Paths
and globs in it are relative to the folder that holds it.

    [tool.ddplint]
    select = ["DDP"]
    extend-select = []
    ignore = ["DDP005"]
    per-file-ignores = { "tests/**" = ["DDP004"] }
    exclude = [...]                  # replaces the default folder list (.venv/, build/, ...)
    extend-exclude = ["generated/"]  # adds to it
    respect-gitignore = true
    unsafe-fixes = false
    strict = ["DDP004"]              # rules that then flag every case, not only the evidenced ones
    include-notebooks = true         # false: folders yield .py and .pyi files only
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from ddplint.engine.files import DEFAULT_EXCLUDE, Exclusion, Pattern, parse_ignore_lines

_LIST_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude", "strict")
_BOOL_KEYS = ("unsafe-fixes", "respect-gitignore", "include-notebooks")
KNOWN_KEYS = (*_LIST_KEYS, "per-file-ignores", *_BOOL_KEYS)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file and the key."""


@dataclass
class Settings:
    root: str  # the folder paths and globs are relative to
    source: str | None = None  # the pyproject.toml read, if any
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: list[tuple[Pattern, list[str]]] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    unsafe_fixes: bool = False
    # Codes of rules run in strict mode: a rule with a `strict_variant()` (DDP004) then
    # flags every case it recognises, not only those the file gives evidence for.
    strict: list[str] = field(default_factory=list)
    include_notebooks: bool = True  # folders yield their .ipynb files too
    _rules_cache: dict = field(default_factory=dict, repr=False)

    def exclusion(self) -> Exclusion:
        patterns = parse_ignore_lines([*self.exclude, *self.extend_exclude], self.root)
        return Exclusion(patterns, respect_gitignore=self.respect_gitignore)

    def choose_rules(
        self, select: Sequence[str] | None = None, extend_select: Sequence[str] = (), ignore: Sequence[str] = ()
    ) -> list:
        """The active rules. `select` (from the command line) replaces the configured selection;
        `extend_select` and `ignore` add to it. Raises ConfigError naming unknown codes."""
        from ddplint.rules import all_rules
        from ddplint.engine.selection import SelectionError, choose_rules, unknown_codes

        known = all_rules()
        configured = {
            "select": self.select or [],
            "extend-select": self.extend_select,
            "ignore": self.ignore,
            "per-file-ignores": [code for _, codes in self.per_file_ignores for code in codes],
        }
        for key, codes in configured.items():
            unknown = unknown_codes(known, codes)
            if unknown:
                raise ConfigError(
                    f"{self.source}: [tool.ddplint] {key}: unknown rule code or prefix: {', '.join(unknown)} "
                    "(see `ddplint rules`)"
                )
        strict = set(self.strict)
        by_code = {rule.code: rule for rule in known}
        for code in self.strict:
            if code not in by_code or not hasattr(by_code[code], "strict_variant"):
                having = ", ".join(rule.code for rule in known if hasattr(rule, "strict_variant"))
                reason = "unknown rule code" if code not in by_code else "this rule has no strict mode"
                raise ConfigError(f"{self.source}: [tool.ddplint] strict: {code}: {reason} (rules with one: {having})")
        if select:
            chosen, extend, ignored = list(select), [], []
        else:
            chosen, extend, ignored = self.select or ["DDP"], self.extend_select, self.ignore
        try:
            rules = choose_rules(known, [*chosen, *extend, *extend_select], [*ignored, *ignore])
        except SelectionError as error:
            raise ConfigError(str(error)) from None
        return [rule.strict_variant() if rule.code in strict else rule for rule in rules]

    def rules_for(self, path: str, rules: Sequence) -> list:
        """`rules` less those per-file-ignores switches off for `path`."""
        from ddplint.engine.selection import without

        ignored = tuple(code for pattern, codes in self.per_file_ignores if pattern.matches_within(path) for code in codes)
        key = (ignored, tuple(rules))
        if key not in self._rules_cache:
            self._rules_cache[key] = without(rules, ignored)
        return self._rules_cache[key]


def find_config(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.ddplint] table."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _has_table(path: str) -> bool:
    try:
        return "ddplint" in _tool(path)
    except ConfigError:
        return True  # report the broken file rather than silently skip past it


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: cannot decode: invalid utf-8 byte at offset {error.start} (TOML is UTF-8)") from None


def _tool(path: str) -> dict:
    """The `[tool]` table of `path` (empty if it has none)."""
    tool = _read(path).get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool must be a table ([tool.ddplint]), not {type(tool).__name__}")
    return tool


def load(path: str) -> Settings:
    """Settings from the `[tool.ddplint]` table of `path` (an empty table if it has none)."""
    table = _tool(path).get("ddplint", {})
    where = f"{path}: [tool.ddplint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (known: {', '.join(KNOWN_KEYS)})")
    settings = Settings(root=os.path.dirname(os.path.abspath(path)), source=path)
    for key in _LIST_KEYS:
        if key in table:
            setattr(settings, key.replace("-", "_"), _strings(table[key], f"{where} {key}"))
    for key in _BOOL_KEYS:
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where} {key} must be true or false")
            setattr(settings, key.replace("-", "_"), table[key])
    for key in ("select", "extend_select", "ignore", "strict"):
        value = getattr(settings, key)
        if value is not None:
            setattr(settings, key, [code.strip().upper() for code in value])
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where} per-file-ignores must be a table of glob = [codes]")
    for glob, codes in per_file.items():
        codes = _strings(codes, f'{where} per-file-ignores "{glob}"')
        settings.per_file_ignores.append((Pattern(glob, settings.root), [code.strip().upper() for code in codes]))
    return settings


def _strings(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return value


def resolve(config: str | None = None, isolated: bool = False, start: str = ".") -> Settings:
    """The settings for a run: `--config`, else the nearest table above `start`, else defaults."""
    if isolated:
        return Settings(root=os.getcwd())
    path = config or find_config(start)
    if path is None:
        return Settings(root=os.getcwd())
    if config is not None and not os.path.isfile(config):
        raise ConfigError(f"{config}: cannot read: {'is a directory' if os.path.isdir(config) else 'no such file'}")
    return load(path)
