"""`ddplint server`: a real LSP session over stdio, and the pieces it is built from."""

from __future__ import annotations

import re
import subprocess
import sys
from email.message import Message
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from ddplint_test_support import REPO, cli_env, cross_module_project

pytest.importorskip("pygls", reason="the language server needs the `server` extra (pygls)")

from ddplint import lint_source  # noqa: E402
from ddplint.core.diagnostics import Diagnostic  # noqa: E402
from ddplint.rules import all_rules  # noqa: E402
from ddplint.server import lsp  # noqa: E402
from ddplint.server.client import Session, apply_text_edits  # noqa: E402

BROKEN = 'import torch.distributed\n\nmodel = torch.load("ckpt.pt")\n'
SERVER = [sys.executable, "-m", "ddplint", "server"]


@pytest.fixture
def session(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("os.environ", cli_env())
    with Session(SERVER, tmp_path, initialization_options={"debounce": 0.5}) as session:
        yield session
    assert session.process.returncode == 0  # shutdown + exit end the server cleanly


def _actions(session: Session, uri: str, diagnostics: list[dict], **context) -> dict[str, dict]:
    result = session.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostics[0]["range"], "context": {"diagnostics": diagnostics, **context}},
    )
    return {action["title"]: action for action in result}


def test_a_session_shows_ddp004_and_its_quick_fix_applies(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    uri = path.as_uri()
    session.open(uri, BROKEN)
    [diagnostic] = session.diagnostics(uri)
    assert diagnostic["code"] == "DDP004"
    assert diagnostic["source"] == "ddplint"
    assert diagnostic["range"] == {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 29}}
    assert diagnostic["codeDescription"]["href"].endswith("rules.md#ddp004-torch-load-without-map-location")
    assert "map_location" in diagnostic["message"]
    # Its chain, a click away: who runs it (the import that shows ranks do), then the harm.
    runs, harm = diagnostic["relatedInformation"]
    assert runs["location"] == {"uri": uri, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}
    assert runs["message"].startswith("runs: this file runs distributed")
    assert harm["location"]["range"]["start"] == {"line": 2, "character": 8}
    assert harm["message"].startswith("harm: it is named as a checkpoint: its tensors land on the device they were saved from")

    actions = _actions(session, uri, [diagnostic])
    fix = actions["ddplint: fix DDP004 (torch-load-without-map-location)"]
    assert fix["kind"] == "quickfix" and fix["isPreferred"] is True
    fixed = apply_text_edits(BROKEN, fix["edit"]["changes"][uri])
    assert fixed == 'import torch.distributed\n\nmodel = torch.load("ckpt.pt", map_location="cpu")\n'

    noqa = apply_text_edits(BROKEN, actions["ddplint: add `# noqa: DDP004`"]["edit"]["changes"][uri])
    assert noqa.splitlines()[2].endswith("# noqa: DDP004") and lint_source(noqa) == []
    assert apply_text_edits(BROKEN, actions["ddplint: fix all safe fixes"]["edit"]["changes"][uri]) == fixed

    # The client applies the fix: the next diagnostics (for that version) are empty.
    version = session.change(uri, fixed)
    assert session.diagnostics(uri, version) == []


def _finding(rule) -> Diagnostic:
    return Diagnostic("train.py", 1, 1, 1, 2, rule.code, rule.name, rule.message)


def test_every_rule_link_leads_to_that_rules_section() -> None:
    """In a checkout, each finding links to its rule's heading in docs/rules.md (the anchor
    GitHub makes: lower case, punctuation dropped, spaces to hyphens)."""
    linter = lsp.Linter()
    for rule in all_rules():
        base, _, fragment = linter.code_description(_finding(rule)).href.partition("#")
        path = Path(url2pathname(urlparse(base).path))
        assert base == path.as_uri() and path.is_file()
        headings = [line[3:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("## ")]
        assert fragment in {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_an_installed_wheel_links_to_its_declared_rules_url_or_not_at_all(monkeypatch, tmp_path: Path) -> None:
    """A wheel holds no docs/: the link comes from a `Rules` entry of `[project.urls]`, and
    without one a finding carries no link rather than a broken one."""
    monkeypatch.setattr(lsp, "RULES_MD", tmp_path / "docs" / "rules.md")  # where a wheel's would be
    declared = Message()
    monkeypatch.setattr(lsp.metadata, "metadata", lambda name: declared)
    [rule] = [rule for rule in all_rules() if rule.code == "DDP004"]
    assert lsp.Linter().code_description(_finding(rule)) is None
    declared["Project-URL"] = "Rules, https://example.org/ddplint/rules.html"
    link = lsp.Linter().code_description(_finding(rule)).href
    assert link == "https://example.org/ddplint/rules.html#ddp004-torch-load-without-map-location"


def test_only_filters_actions_and_fix_all_adds_imports(session: Session, tmp_path: Path) -> None:
    source = (
        "import torch.distributed\nimport torch.multiprocessing as mp\n\n"
        'model = torch.load("a.pt")\nmodel = torch.load("b.pt")\nmp.set_sharing_strategy("file_system")\n'
        "mp.spawn(evaluate, nprocs=2)\n"
    )
    uri = (tmp_path / "many.py").as_uri()
    session.open(uri, source)
    diagnostics = session.diagnostics(uri)
    assert [d["code"] for d in diagnostics] == ["DDP004", "DDP004", "DDP005"]
    only_fix_all = _actions(session, uri, diagnostics[:1], only=["source.fixAll"])
    assert list(only_fix_all) == ["ddplint: fix all safe fixes"]
    fixed = apply_text_edits(source, only_fix_all["ddplint: fix all safe fixes"]["edit"]["changes"][uri])
    assert fixed.count('map_location="cpu"') == 2 and "file_system" in fixed  # DDP005's fix is unsafe

    unsafe = _actions(session, uri, diagnostics[2:])
    title = "ddplint: fix DDP005 (file-system-sharing-strategy) (unsafe)"
    assert unsafe[title]["isPreferred"] is False
    after = apply_text_edits(source, unsafe[title]["edit"]["changes"][uri])
    assert "import resource" in after and "file_system" not in after  # the fix brings its import
    assert [d.code for d in lint_source(after)] == ["DDP004", "DDP004"]


def test_changes_are_debounced_and_positions_are_utf16(session: Session, tmp_path: Path) -> None:
    uri = (tmp_path / "edit.py").as_uri()
    session.open(uri, "import torch.distributed\n")
    assert session.diagnostics(uri) == []
    for text in ("import torch.distributed\nx", "import torch.distributed\nx = ", "import torch.distributed\nx = 1", 'import torch.distributed\nx = "😀"; torch.load(ckpt)\n'):
        version = session.change(uri, text)
    [diagnostic] = session.diagnostics(uri, version)
    # A burst of changes within the debounce interval is linted together, once it pauses (the
    # first change may be answered at once if the document was quiet before it).
    published = [n["params"]["version"] for n in session.notifications if n["method"] == "textDocument/publishDiagnostics"]
    assert published[0] == 1 and published[-1] == version and len(published) <= 3
    # The emoji is one code point but two UTF-16 units: torch.load starts at unit 10, not 9.
    assert diagnostic["range"]["start"] == {"line": 1, "character": 10}


def test_a_half_typed_file_is_not_an_error_and_close_clears(session: Session, tmp_path: Path) -> None:
    uri = (tmp_path / "typing.py").as_uri()
    session.open(uri, 'import torch.distributed\nm = torch.load("x.pt"\n')
    assert session.diagnostics(uri) == []
    session.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert session.diagnostics(uri) == []


def test_config_applies_and_a_broken_one_is_shown_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("os.environ", cli_env())
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP004"]\n')
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text('[tool.ddplint]\nselect = ["NOPE"]\n')
    with Session(SERVER, tmp_path) as session:
        ignored = (tmp_path / "a.py").as_uri()
        session.open(ignored, BROKEN)
        assert session.diagnostics(ignored) == []
        broken = (tmp_path / "bad" / "b.py").as_uri()
        session.open(broken, BROKEN)
        assert [d["code"] for d in session.diagnostics(broken)] == ["DDP004"]  # defaults apply
        again = (tmp_path / "bad" / "c.py").as_uri()
        session.open(again, BROKEN)
        session.diagnostics(again)
        shown = [n["params"]["message"] for n in session.notifications if n["method"] == "window/showMessage"]
        assert len(shown) == 1 and "unknown rule code or prefix: NOPE" in shown[0]


def test_an_edited_configuration_applies_on_save(session: Session, tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    session.open(uri, BROKEN)
    assert [d["code"] for d in session.diagnostics(uri)] == ["DDP004"]
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP004"]\n')
    session.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert session.diagnostics(uri) == []


def test_server_without_pygls_is_one_line_and_exit_2() -> None:
    code = "import sys; sys.modules['pygls'] = None; from ddplint.commands.cli import main; sys.exit(main(['server']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and 'pip install "ddplint[server]"' in result.stderr


def test_the_linter_core_imports_without_the_optional_packages() -> None:
    blocked = ["pygls", "lsprotocol", "nbformat", "torch"]
    code = (
        f"import sys; sys.modules.update(dict.fromkeys({blocked!r}));"
        "import ddplint; print([d.code for d in ddplint.lint_source('import torch.distributed\\nm = torch.load(ckpt)\\n')][:1])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['DDP004']"


def test_the_latency_benchmark_runs(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text("import torch.distributed\n\n" + "".join(f"def f{i}(ckpt):\n    return torch.load(ckpt)\n\n" for i in range(30)))
    fixed = ("    return torch.load(ckpt)\n\ndef f8", "    return torch.load(ckpt, map_location='cpu')\n\ndef f8")
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "lsp_latency.py"), "--file", str(path), "--finding", *fixed],
        capture_output=True, text=True, env=cli_env(), timeout=300,
    )
    assert result.returncode == 0, result.stderr
    scenarios = [("typing at the start", 19), ("typing in the middle", 19), ("an edit that changes a finding", 10)]
    for scenario, edits in scenarios:
        row = rf"^\| `train.py` \| 92 \| 30 \| {scenario} \| {edits} \| \d+ / \d+ \|$"
        assert re.search(row, result.stdout, re.M)


def test_cross_module_findings_match_the_cli_and_follow_a_saved_module(tmp_path: Path, monkeypatch) -> None:
    """The server lints an open module with its project's model: `engine.py` is told where
    main.py wraps the model, as `ddplint check` says; when main.py is saved without the
    wrap, engine.py is linted again and the findings go."""
    import shutil

    root = tmp_path / "engine_module"
    shutil.copytree(Path(__file__).parent / "data" / "projects" / "engine_module", root)
    engine, main = root / "detr" / "engine.py", root / "detr" / "main.py"
    expected = [
        line.split(": ", 1)[1].split(" ", 1)
        for line in (root / "expected.txt").read_text().splitlines()
        if line.startswith("detr/engine.py:")
    ]
    monkeypatch.setattr("os.environ", cli_env())
    with Session(SERVER, root, initialization_options={"debounce": 0}) as session:
        session.open(engine.as_uri(), engine.read_text())
        found = session.diagnostics(engine.as_uri())
        assert sorted((d["code"], d["range"]["start"]["line"] + 1) for d in found) == [("DDP019", 12), ("DDP021", 5)]
        for (code, where), diagnostic in zip(sorted(expected), sorted(found, key=lambda d: d["code"])):
            assert diagnostic["code"] == code and where.strip("()") in diagnostic["message"]

        session.open(main.as_uri(), main.read_text())
        session.diagnostics(main.as_uri())
        unwrapped = main.read_text().replace("torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])", "model")
        main.write_text(unwrapped)
        version = session.change(main.as_uri(), unwrapped)
        session.diagnostics(main.as_uri(), version)
        session.notify("textDocument/didSave", {"textDocument": {"uri": main.as_uri()}})
        assert session.diagnostics(engine.as_uri()) == []


def test_the_project_model_is_kept_out_of_the_collectors_scans_until_a_save(tmp_path: Path) -> None:
    """The model of a project lives until one of its modules is saved, so it is frozen out of
    the garbage collector's scans (a full collection over a large project's model cost more
    than a lint); a save lets it go."""
    import gc

    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "train.py"
    path.write_text("import torch.distributed\nstate = torch.load(path)\n")
    linter = lsp.Linter()
    try:
        findings, problem = linter.lint(path.as_uri(), str(path), path.read_text())
        assert [finding.code for finding in findings] == ["DDP004"] and problem is None
        assert gc.get_freeze_count() > 0
        linter.forget_project(str(path))
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_fix_all_is_what_fix_writes_also_for_a_fix_that_rests_on_another_module(tmp_path: Path, monkeypatch) -> None:
    """DDP003's set_epoch fix needs data.py (the helper that builds the sampler): the code
    action lints the buffer with the project's model, as `--fix` lints the file."""
    train = cross_module_project(tmp_path, imports="import torch\n", tail="    return torch.load('last.pt')\n")
    source = train.read_text()
    monkeypatch.setattr("os.environ", cli_env())
    with Session(SERVER, tmp_path, initialization_options={"debounce": 0}) as session:
        session.open(train.as_uri(), source)
        diagnostics = session.diagnostics(train.as_uri())
        assert sorted(d["code"] for d in diagnostics) == ["DDP003", "DDP004"]
        actions = _actions(session, train.as_uri(), diagnostics, only=["source.fixAll"])
        fixed = apply_text_edits(source, actions["ddplint: fix all safe fixes"]["edit"]["changes"][train.as_uri()])
    result = subprocess.run(
        [sys.executable, "-m", "ddplint", "--fix", "--no-cache", "train.py"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "loader.sampler.set_epoch(epoch)" in fixed and fixed == train.read_text()


def test_a_workspace_without_a_root_marker_is_one_project(tmp_path: Path, monkeypatch) -> None:
    """A checkout without pyproject.toml, setup.cfg, setup.py or .git (an unpacked archive):
    the editor's workspace folder is the project, so engine/engine.py sees the DDP model that
    main.py wraps, as `ddplint check .` run there does."""
    (tmp_path / "engine").mkdir()
    engine = tmp_path / "engine" / "engine.py"
    engine.write_text(
        "def train_one_epoch(model, loader, optimizer):\n"
        "    for batch in loader:\n"
        "        loss = model.module(batch)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
    )
    (tmp_path / "main.py").write_text(
        "import torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel\n\n"
        "from engine.engine import train_one_epoch\n\n\n"
        "def main(model, loader, optimizer):\n"
        "    dist.init_process_group('nccl')\n"
        "    model = DistributedDataParallel(model)\n"
        "    train_one_epoch(model, loader, optimizer)\n"
    )
    cli = subprocess.run([sys.executable, "-m", "ddplint", "--no-cache", "."], cwd=tmp_path, env=cli_env(), capture_output=True, text=True)
    assert "engine/engine.py:3:16: DDP019" in cli.stdout, cli.stdout + cli.stderr
    monkeypatch.setattr("os.environ", cli_env())
    with Session(SERVER, tmp_path, initialization_options={"debounce": 0}) as session:
        session.open(engine.as_uri(), engine.read_text())
        assert [d["code"] for d in session.diagnostics(engine.as_uri())] == ["DDP019"]
