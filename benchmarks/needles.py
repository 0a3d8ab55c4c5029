"""How selective is each rule's prefilter? For a folder of real code, the share of files and
bytes whose text admits each rule (and any rule): that share is what ddplint must parse.

    python benchmarks/needles.py benchmarks/corpus/packages
"""

import os
import sys

from ddplint.rules import all_rules


def main(root: str) -> None:
    texts = []
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    texts.append(handle.read())
    total = sum(map(len, texts)) or 1
    admitted_any = [False] * len(texts)
    print(f"{len(texts)} files, {total / 1e6:.1f} MB of text")
    for rule in all_rules():
        hits = [i for i, text in enumerate(texts) if rule.matches_text(text)]
        for i in hits:
            admitted_any[i] = True
        share = sum(len(texts[i]) for i in hits) / total
        print(f"{rule.code} {rule.name:<40} {len(hits):>6} files {share:>7.1%} of bytes")
    hits = [i for i, flag in enumerate(admitted_any) if flag]
    print(f"{'any rule':<47} {len(hits):>6} files {sum(len(texts[i]) for i in hits) / total:>7.1%} of bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
