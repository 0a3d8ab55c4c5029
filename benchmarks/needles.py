"""How selective is each rule's prefilter? For a folder of real code, the share of files and
bytes whose text admits each rule (its needles), then the share whose ast also passes the
rule's screen, and for any rule the share that libcst must parse (engine.rules_to_run).

    python benchmarks/needles.py benchmarks/corpus/packages
"""

import os
import sys

from ddplint.engine.lint import rules_to_run
from ddplint.rules import all_rules
from ddplint.prefilter.screens import facts_of


def main(root: str) -> None:
    texts = []
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    texts.append(handle.read())
    total = sum(map(len, texts)) or 1

    def share(indices) -> str:
        return f"{len(indices):>6} files {sum(len(texts[i]) for i in indices) / total:>7.1%} of bytes"

    print(f"{len(texts)} files, {total / 1e6:.1f} MB of text")
    print(f"{'rule':<47} {'needles':>26}   {'needles and screen':>26}")
    admitted_any: set[int] = set()
    for rule in all_rules():
        hits = [i for i, text in enumerate(texts) if rule.matches_text(text)]
        admitted_any.update(hits)
        screened = hits
        if rule.screen is not None:
            facts = {i: facts_of(texts[i]) for i in hits}
            screened = [i for i in hits if facts[i] is None or rule.screen.holds(facts[i])]
        print(f"{rule.code} {rule.name:<40} {share(hits)}   {share(screened)}")
    parsed = [i for i, text in enumerate(texts) if rules_to_run(text, all_rules())]
    print(f"{'any rule (what libcst parses)':<47} {share(sorted(admitted_any))}   {share(parsed)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
