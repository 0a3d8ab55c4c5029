"""What the lines of a shell script (or of a document's shell code) set before a command runs:
the literal values its variables are assigned, and the folders it changes to with `cd`.

A launch script often moves before it launches (`cd /home/me/ImbalancedSSL/BMB_IMG`, then
`python -m torch.distributed.launch ... ABCfix.py`): a script path the command names relative to
the folder it runs in is the file in that folder, not one beside the shell script. And it often
holds what the command passes in a variable (`ACCELERATE_CONFIG_FILE="accelerate_configs/x.yaml"`,
then `accelerate launch --config_file $ACCELERATE_CONFIG_FILE`). This module reads both, in the
order of the lines, without running anything: a variable assigned two different values (in two
branches, in a loop) has no known value, and a value that runs a command (`$(...)`) is kept as
written, except the idiom for the script's own folder (`$(dirname "$0")`, `$(cd $(dirname
${BASH_SOURCE[0]}); pwd)`), which becomes HERE. In a document (`.md`, `.rst`), a `cd` holds until
its code block ends. Which project folder a `cd` target is, is the project's to say
(ddplint.model.project): this module only gives the targets, variables expanded.
"""

from __future__ import annotations

import re

HERE = "@HERE"  # the folder of the shell script itself, as `$(dirname "$0")` names it
_RUNS = r"\$\((?:[^()\n]|\([^()\n]*\))*\)"  # `$(dirname "$0")`, `$(cd "$(dirname "$0")" && pwd)`
_ASSIGNMENT = re.compile(
    rf"(?:^|(?<=[\s`;(]))(?:export[ \t]+)?([A-Za-z_]\w*)=(\"?{_RUNS}\"?|\"[^\"\n]*\"|'[^'\n]*'|[^\s`;|&)]*)"
)
# `cd X`, `pushd X`, `popd`: at the start of a line or after `;`, `&&`, `||`, `(`, `then`, `do`
# (not inside `$(...)`: a command substitution runs in a shell of its own)
_CHANGE = re.compile(rf"(?:^|[;&|]|(?<!\$)\(|\b(?:then|do|else))[ \t]*(cd|pushd|popd)(?![\w.-])[ \t]*((?:{_RUNS}|[^;&|)\n])*)")
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_FENCE = re.compile(r"^[ \t>]*(?:```|~~~)")


def _here(text: str) -> str:
    """`text` with the idiom for the script's own folder (`$(dirname "$0")`, `$(cd $(dirname
    ${BASH_SOURCE[0]}) && pwd)`) turned into HERE, followed by what comes after it (`/..`)."""
    if "dirname" in text and ("$0" in text or "BASH_SOURCE" in text):
        return HERE + text[text.rfind(")") + 1 :].strip("'\"")
    return text


class Shell:
    """A document's lines read in order (`at` asks for lines of increasing index)."""

    def __init__(self, lines: list[str], document: bool) -> None:
        self._lines = lines
        self._document = document  # a `cd` holds until its code block ends
        self._read = 0
        self._variables: dict[str, str | None] = {}  # None: assigned different values
        self._folders: list[str] = []  # the `cd` targets in effect, in order

    def expand(self, text: str) -> str:
        """`text` with the variables of known value replaced (`$ROOT/SAW`, `${CONFIG}`); the
        others are left as written."""

        def value(match: re.Match) -> str:
            known = self._variables.get(match.group(1) or match.group(2))
            return known if known is not None else match.group(0)

        return _here(_VARIABLE.sub(value, text))

    def at(self, index: int, before: str = "") -> tuple[str, ...]:
        """The `cd` targets in effect at line `index`, with those of `before` (the text of that
        line before its command: `cd SAW && python ...`), variables expanded."""
        while self._read < index:
            self._line(self._lines[self._read])
            self._read += 1
        folders = list(self._folders)
        self._changes(before, folders)
        return tuple(folders)

    def _line(self, line: str) -> None:
        if self._document and _FENCE.match(line):
            self._folders.clear()
            return
        code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        for name, written in _ASSIGNMENT.findall(code):
            value = self.expand(written.strip("'\"") if written[:1] in "'\"" else written)
            self._variables[name] = value if self._variables.get(name, value) == value else None
        self._changes(code, self._folders)

    def _changes(self, code: str, folders: list[str]) -> None:
        for verb, target in _CHANGE.findall(code):
            if verb == "popd":
                if folders:
                    folders.pop()
                continue
            target = target.strip()
            # `cd` alone, `cd ~`, `cd -`: the home folder or the last one, none of the project's
            folders.append(self.expand(target.strip("'\"")) if target and target[0] not in "~-" else "~")
