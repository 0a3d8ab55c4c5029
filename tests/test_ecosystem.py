"""ddplint next to the tools around it: pre-commit, --add-noqa, the generated docs, the API."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import ddplint

from ddplint_test_support import REPO, cli_env as _env, cross_module_project

LOAD = "import torch.distributed\nx = torch.load('a.pt')\n"


def test_add_noqa_silences_every_finding_and_merges_existing_comments(run, tmp_path):
    source = textwrap.dedent(
        """\
        import torch.distributed
        import torch.multiprocessing as mp
        a = torch.load('a.pt')  # noqa: E501
        b = torch.load(
            'b.pt')
        c = torch.load('c.pt')  # noqa
        mp.set_sharing_strategy('file_system'); d = torch.load('#d.pt')
        mp.spawn(evaluate, nprocs=2)
        """
    )
    (tmp_path / "m.py").write_text(source)
    os.chmod(tmp_path / "m.py", 0o640)
    result = run("--add-noqa", "m.py")
    assert result.returncode == 0 and result.stdout == "Added 3 noqa comments.\n"
    assert (tmp_path / "m.py").read_text() == source.replace("# noqa: E501", "# noqa: E501, DDP004").replace(
        "'b.pt')", "'b.pt')  # noqa: DDP004"
    ).replace("'#d.pt')", "'#d.pt')  # noqa: DDP004, DDP005")
    assert oct(os.stat(tmp_path / "m.py").st_mode & 0o777) == "0o640"
    assert run("m.py").returncode == 0
    assert run("--add-noqa", "m.py").stdout == "Added 0 noqa comments.\n"
    assert run("--add-noqa", "--fix", "m.py").returncode == 2


def test_add_noqa_covers_cross_module_findings_and_exits_0_only_when_none_is_left(run, tmp_path):
    """The finding in train.py needs data.py (the sampler its helper builds): --add-noqa sees
    what `check` sees, so the CI it was run for passes afterwards."""
    cross_module_project(tmp_path)
    assert run("--no-cache", ".").returncode == 1
    result = run("--no-cache", "--add-noqa", ".")
    assert (result.returncode, result.stdout, result.stderr) == (0, "Added 1 noqa comment.\n", "")
    assert "    for epoch in range(3):  # noqa: DDP003\n" in (tmp_path / "train.py").read_text()
    assert run("--no-cache", ".").returncode == 0


def test_add_noqa_places_comments_in_a_file_with_old_mac_line_ends(run, tmp_path):
    """Lines that end in a lone \\r: each comment goes at the end of its finding's statement,
    and it covers the statement's other lines there too."""
    source = 'import torch.distributed\rx = torch.load(\r  "a.pt")\ry = torch.load("b.pt"); s = """\rtext"""\r'
    (tmp_path / "m.py").write_bytes(source.encode())
    result = run("--add-noqa", "m.py")
    assert (result.returncode, result.stdout) == (0, "Added 2 noqa comments.\n")
    assert (tmp_path / "m.py").read_bytes() == source.replace('"a.pt")\r', '"a.pt")  # noqa: DDP004\r').replace(
        'text"""\r', 'text"""  # noqa: DDP004\r'
    ).encode()
    assert run("m.py").returncode == 0


def test_add_noqa_returns_the_findings_no_comment_reaches_with_the_reason():
    from ddplint.core.diagnostics import Diagnostic
    from ddplint.fixing.add_noqa import add_noqa

    source = "import torch.distributed\nx = torch.load('a.pt')\n"
    [found] = ddplint.lint_source(source)
    past_the_end = Diagnostic(found.path, 9, 1, 9, 2, found.code, found.name, found.message)
    placed = add_noqa(source, [found, past_the_end])
    assert placed.source == source.replace("'a.pt')", "'a.pt')  # noqa: DDP004") and placed.changed == 1
    assert [(miss.diagnostic, miss.reason) for miss in placed.unplaced] == [
        (past_the_end, "line 9 is past the end of the file (2 lines)")
    ]


def test_docs_are_up_to_date():
    """docs/rules.md and the README's rules table are generated from the rule modules."""
    result = subprocess.run(
        [sys.executable, "-m", "ddplint.commands.docs", "--check"], cwd=REPO, env=_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr + "\nRegenerate them with: python -m ddplint.commands.docs"


def test_rules_reference_covers_every_rule_with_its_examples():
    from ddplint.commands.docs import readme_table, rules_markdown
    from ddplint.rules import all_rules

    reference, table = rules_markdown(), readme_table()
    for rule in all_rules():
        assert f"## {rule.code} {rule.name}" in reference
        assert rule.explanation().splitlines()[0] in reference
        assert all(example.code.rstrip() in reference for example in [*rule.flagged_examples, *rule.clean_examples])
        assert f"| {rule.name} |" in table


def test_public_api_returns_typed_diagnostics():
    import ddplint
    from ddplint.core.diagnostics import Applicability

    [diagnostic] = ddplint.lint_source(LOAD, "m.py")
    assert isinstance(diagnostic, ddplint.Diagnostic)
    assert (diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.code) == ("m.py", 2, 5, "DDP004")
    assert diagnostic.fix.applicability is Applicability.SAFE
    assert ddplint.fix_source(LOAD) == "import torch.distributed\nx = torch.load('a.pt', map_location=\"cpu\")\n"
    assert ddplint.lint_source(LOAD, ignore=["DDP004"]) == []
    with pytest.raises(ddplint.SourceError):
        ddplint.lint_source("import torch.distributed\ndef f(:\n torch.load(x)\n")


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_hooks_check_and_fix(tmp_path):
    """`pre-commit try-repo` installs this checkout (with its uncommitted changes) as the hook
    repository, the way users get it. Each call installs a fresh environment, so there are two."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: pre-commit try-repo needs one")
    work = tmp_path / "project"
    work.mkdir()
    env = {
        **_env(),
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("PYTHONPATH")  # the hook must run the ddplint pre-commit installed, not this checkout

    def try_repo(*hook):
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), *hook, "--color", "never"],
            cwd=work, env=env, capture_output=True, text=True, timeout=600,
        )

    _git("init", "-q", cwd=work)
    (work / "notes.txt").write_text("torch.load('not python')\n")
    _git("add", "notes.txt", cwd=work)
    nothing = try_repo()
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert nothing.stdout.count("(no files to check)Skipped") == 2

    (work / "train.py").write_text(LOAD)
    _git("add", "train.py", cwd=work)
    both = try_repo()  # ddplint, then ddplint-fix
    assert both.returncode == 1, both.stdout + both.stderr
    check_part, fix_part = both.stdout.split("ddplint (fix)")
    assert "train.py:2:5: DDP004" in check_part and "Failed" in check_part
    assert "files were modified by this hook" in fix_part and "Fixed 1 problem. No problems found." in fix_part
    assert (work / "train.py").read_text() == "import torch.distributed\nx = torch.load('a.pt', map_location=\"cpu\")\n"
