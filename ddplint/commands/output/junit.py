"""`--output-format junit`: JUnit XML, which most CI systems show as test results.

One test suite per file with findings, one failed test case per finding; a file that could not
be checked is a test case with an error. A clean run is one passing test case."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from itertools import groupby

from ddplint.core.diagnostics import Diagnostic


def render(diagnostics: Sequence[Diagnostic], errors: Sequence[tuple[str, str]] = ()) -> str:
    root = ElementTree.Element("testsuites", name="ddplint", tests=str(len(diagnostics) + len(errors)))
    root.set("failures", str(len(diagnostics)))
    root.set("errors", str(len(errors)))
    for path, group in groupby(sorted(diagnostics, key=lambda d: d.sort_key), key=lambda d: d.path):
        found = list(group)
        suite = ElementTree.SubElement(root, "testsuite", name=path, tests=str(len(found)), failures=str(len(found)))
        for d in found:
            where = f"cell {d.cell}:" if d.cell is not None else ""
            case = ElementTree.SubElement(
                suite, "testcase", name=f"{d.code} {d.name}", classname=path, file=path, line=str(d.line)
            )
            failure = ElementTree.SubElement(case, "failure", message=d.message, type=d.code)
            failure.text = f"{path}:{where}{d.line}:{d.col}: {d.code} {d.message}"
    for path, reason in errors:
        suite = ElementTree.SubElement(root, "testsuite", name=path, tests="1", errors="1")
        case = ElementTree.SubElement(suite, "testcase", name="ddplint", classname=path, file=path)
        ElementTree.SubElement(case, "error", message=reason)
    if not diagnostics and not errors:
        suite = ElementTree.SubElement(root, "testsuite", name="ddplint", tests="1", failures="0")
        ElementTree.SubElement(suite, "testcase", name="No problems found", classname="ddplint")
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
