"""The prefilters: which rules can fire on a file, decided before libcst parses it.

`needles` checks the text, `screens` CPython's `ast`; `index` is the generated copy of every
rule's needles and screen that the flake8 plugin reads without importing libcst.
"""
