"""The command line as a user meets it: real subprocesses on temporary trees."""

import os
import re
import stat
import subprocess
import sys
import textwrap

import pytest

import ddplint
from ddplint_test_support import cli_env as conftest_env

BROKEN = textwrap.dedent(
    """\
    import torch.distributed
    import torch.multiprocessing as mp

    mp.set_sharing_strategy("file_system")
    model = torch.load("model.pt")
    mp.spawn(evaluate, nprocs=2)
    """
)
FIXED_SAFE = BROKEN.replace('torch.load("model.pt")', 'torch.load("model.pt", map_location="cpu")')


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(BROKEN)
    (tmp_path / "src" / "clean.py").write_text("import torch.distributed\nx = torch.load('a.pt', map_location='cpu')\n")
    (tmp_path / "src" / "other.py").write_text("print('no torch here')\n")
    return tmp_path


def test_check_reports_sorted_findings_summary_and_exit_1(run, tree):
    result = run("src")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("src/train.py:4:1: DDP005 ")
    assert lines[1].startswith("src/train.py:5:9: DDP004 ")
    assert lines[-1] == "Found 2 problems (1 fixable with --fix, 1 with --unsafe-fixes)."
    assert run("check", "src").stdout == result.stdout


def test_clean_tree_exits_0(run, tree):
    result = run("src/clean.py", "src/other.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No problems found." in result.stdout


def test_fix_applies_safe_fixes_only(run, tree):
    os.chmod(tree / "src" / "train.py", 0o750)
    result = run("--fix", "src")
    assert result.returncode == 1  # the unsafe DDP005 is left
    assert (tree / "src" / "train.py").read_text() == FIXED_SAFE
    assert stat.S_IMODE(os.stat(tree / "src" / "train.py").st_mode) == 0o750
    assert "Fixed 1 problem. Found 1 problem left (1 with --unsafe-fixes)." in result.stdout
    assert not [p for p in os.listdir(tree / "src") if p.endswith(".ddplint")]


def test_unsafe_fixes_fix_everything_and_second_fix_changes_nothing(run, tree):
    assert run("--fix", "--unsafe-fixes", "src").returncode == 0
    once = (tree / "src" / "train.py").read_text()
    assert "file_system" not in once and "resource.setrlimit" in once
    assert run("--fix", "--unsafe-fixes", "src").returncode == 0
    assert (tree / "src" / "train.py").read_text() == once


def test_diff_prints_and_writes_nothing(run, tree):
    result = run("--diff", "src")
    assert result.returncode == 1
    assert "+model = torch.load(\"model.pt\", map_location=\"cpu\")" in result.stdout
    assert result.stdout.startswith("--- a/src/train.py\n+++ b/src/train.py\n")
    assert (tree / "src" / "train.py").read_text() == BROKEN


def test_select_and_ignore_with_prefixes(run, tree):
    only_load = run("--select", "DDP004", "src")
    assert [line.split()[1] for line in only_load.stdout.splitlines()[:-1]] == ["DDP004"]
    ignored = run("--select", "DDP", "--ignore", "DDP005", "src")
    assert "DDP005" not in ignored.stdout and "DDP004" in ignored.stdout
    unknown = run("--select", "DDP999", "src")
    assert unknown.returncode == 2 and "unknown rule code or prefix: DDP999" in unknown.stderr


def test_noqa_suppresses_report_and_fix(run, tmp_path):
    source = "import torch.distributed\na = torch.load('a.pt')  # noqa: DDP004\nb = torch.load('b.pt')  # noqa\nc = torch.load(\n    'c.pt')  # noqa:DDP004\nd = torch.load('d.pt')  # noqa: DDP005\n"
    (tmp_path / "n.py").write_text(source)
    result = run("n.py")
    assert [line.split(":")[1] for line in result.stdout.splitlines()[:-1]] == ["6"]
    run("--fix", "n.py")
    assert (tmp_path / "n.py").read_text() == source.replace("torch.load('d.pt')", "torch.load('d.pt', map_location=\"cpu\")")


def test_stdin_lint_and_fix(run):
    source = "import torch.distributed\nx = torch.load('a.pt')\n"
    linted = run("-", "--stdin-filename", "buffer.py", stdin=source)
    assert linted.returncode == 1
    assert linted.stdout.startswith("buffer.py:2:5: DDP004 ")
    fixed = run("--fix", "-", stdin=source)
    assert fixed.stdout == "import torch.distributed\nx = torch.load('a.pt', map_location=\"cpu\")\n"
    assert fixed.returncode == 0


def test_bad_files_give_one_line_and_exit_2_while_others_are_linted(run, tmp_path):
    (tmp_path / "syntax.py").write_text("import torch.distributed\ndef broken(:\n    torch.load('x.pt')\n")
    (tmp_path / "latin.py").write_bytes(b"import torch\nx = torch.load('\xff')\n")
    (tmp_path / "binary.py").write_bytes(b"import torch\x00\x01torch.load")
    (tmp_path / "good.py").write_text("import torch.distributed\nx = torch.load('a.pt')\n")
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    result = run(".", "does-not-exist.py")
    assert result.returncode == 2
    errors = result.stderr.splitlines()
    assert "syntax.py: cannot parse: invalid syntax (line 2, column 12)" in errors
    assert "latin.py: cannot decode: invalid utf-8 byte at offset 29" in errors
    assert "binary.py: cannot read: binary file (contains NUL bytes)" in errors
    assert "dangling.py: cannot read: broken symbolic link" in errors
    assert "does-not-exist.py: cannot read: no such file or directory" in errors
    assert "Traceback" not in result.stderr
    assert "good.py:2:5: DDP004" in result.stdout
    assert result.stdout.splitlines()[-1].endswith("5 files could not be checked.")


def test_a_module_that_does_not_parse_inside_the_ddp_models_reach_is_one_line(run, tmp_path):
    """The program model reads the modules a DDP model's module imports; one of them that does
    not parse has no summary, and asking which of its functions calls an unwrapping helper
    (a file named with it) crashed the run (reflected_gnt, github-41)."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "gnt").mkdir()
    (tmp_path / "gnt" / "__init__.py").write_text("")
    (tmp_path / "gnt" / "model.py").write_text(textwrap.dedent("""\
        from torch.nn.parallel import DistributedDataParallel as DDP
        from gnt.head import Head

        def de_parallel(model):
            return model.module if hasattr(model, "module") else model

        class Model:
            def __init__(self):
                self.net = DDP(Head())
        """))
    (tmp_path / "gnt" / "head.py").write_text("import torch\n\nclass Head(torch.nn.Module):\n    def forward(self, x):\n        if x:\n            return x\n        else:\n        return x\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        import torch.distributed as dist
        from gnt.model import Model, de_parallel

        dist.init_process_group("nccl")
        torch.save(de_parallel(Model().net).state_dict(), "m.pt")
        """))
    result = run("gnt/head.py", "train.py")
    assert "Traceback" not in result.stderr
    assert result.returncode == 2
    assert result.stderr.startswith("gnt/head.py: cannot parse: ")
    assert "train.py:6:1: DDP014" in result.stdout


def test_a_file_named_on_the_command_line_is_always_checked_for_syntax(run, tmp_path):
    """No rule's text occurs in plain.py, so a run over its folder does not parse it (ddplint
    is not a syntax checker); named, as pre-commit and a newcomer name files, it is parsed by
    CPython and its syntax error is one line and exit 2, whatever the cache holds."""
    (tmp_path / "plain.py").write_text("def broken(:\n    pass\n")
    named = "plain.py: cannot parse: invalid syntax (line 1, column 12)\n"
    for args in (["-v", "plain.py"], ["plain.py"]):  # cold, then with the results cache
        result = run(*args)
        assert (result.returncode, result.stdout) == (2, "No problems found. 1 file could not be checked.\n")
        assert named in result.stderr
    folder = run(".")
    assert (folder.returncode, folder.stderr) == (0, "")  # not parsed, and the cache did not change that
    assert run("plain.py").returncode == 2
    buffer = run("-", "--stdin-filename", "plain.py", stdin="def broken(:\n")
    assert (buffer.returncode, buffer.stderr) == (2, named)


def test_encoding_bom_and_crlf_are_kept(run, tmp_path):
    latin = "# -*- coding: latin-1 -*-\nimport torch.distributed\nname = 'caf\xe9'\ncheckpoint = torch.load(name)\n"
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    bom = "import torch.distributed\r\nx = torch.load('a.pt')\r\n"
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + bom.encode())
    assert run("--fix", ".").returncode == 0
    assert (tmp_path / "latin.py").read_bytes() == latin.replace("load(name)", 'load(name, map_location="cpu")').encode("latin-1")
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + bom.replace("load('a.pt')", "load('a.pt', map_location=\"cpu\")").encode()


def test_rule_and_rules_commands(run):
    listing = run("rules")
    assert listing.returncode == 0
    assert "DDP004  torch-load-without-map-location" in listing.stdout
    # each rule says whose code it reads
    assert "DDP026  clip-grad-norm-on-fsdp" in listing.stdout and listing.stdout.count("frameworks: ") == len(listing.stdout.splitlines())
    assert [line.rpartition("frameworks: ")[2] for line in listing.stdout.splitlines() if line.startswith("DDP028")] == ["Lightning"]
    explained = run("rule", "DDP004")
    assert explained.returncode == 0
    assert "map_location" in explained.stdout and "Fix: safe" in explained.stdout and "Fixed:" in explained.stdout
    assert "\nFrameworks: torch DDP, FSDP, Accelerate, Lightning, Fabric\n" in explained.stdout
    assert run("rule", "torch-load-without-map-location").stdout == explained.stdout
    missing = run("rule", "DDP999")
    assert missing.returncode == 2 and "unknown rule" in missing.stderr


def test_version_and_usage_errors(run):
    version = run("--version")
    assert version.returncode == 0 and version.stdout == f"ddplint {ddplint.__version__}\n"
    assert run("check", "--version").stdout == version.stdout
    assert run("--no-such-flag").returncode == 2


def test_help_lists_version(run):
    help_text = run("--help")
    assert help_text.returncode == 0
    assert re.search(r"^  --version +print the version and exit$", help_text.stdout, re.MULTILINE), help_text.stdout


def test_one_call_on_many_files_prints_one_summary_of_them_all(run, tmp_path):
    """The pre-commit hooks pass every file to one call (require_serial), so its summary is the commit's."""
    names = [f"m{index:02}.py" for index in range(12)]
    for name in names:
        (tmp_path / name).write_text("import torch.distributed\nx = 1\n")
    for name in (names[0], names[7]):
        (tmp_path / name).write_text("import torch.distributed\nx = torch.load('a.pt')\n")
    summaries = re.compile(r"^(?:Found|Fixed|No problems) .*$", re.MULTILINE)
    checked = run("--no-cache", *names)
    assert summaries.findall(checked.stdout) == ["Found 2 problems (2 fixable with --fix)."], checked.stdout
    assert checked.stdout.splitlines()[-1].startswith("Found ")
    fixed = run("--no-cache", "--fix", *names)
    assert summaries.findall(fixed.stdout) == ["Fixed 2 problems. No problems found."], fixed.stdout


def test_version_does_not_import_libcst():
    code = "import sys\nfrom ddplint.commands.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\nprint('libcst' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=conftest_env())
    assert out.stdout.splitlines()[-1] == "False", out.stdout + out.stderr


def test_flake8_plugin_reports_the_same_findings_and_honours_noqa(run, tree):
    (tree / "src" / "n.py").write_text("import torch.distributed\nx = torch.load('a.pt')  # noqa: DDP004\n")
    result = run("--select", "DDP", "src", tool="flake8")
    assert result.returncode == 1
    assert sorted(result.stdout.splitlines()) == sorted(
        [
            "src/train.py:4:1: DDP005 " + "set_sharing_strategy('file_system') leaks /dev/shm files when workers die; keep file_descriptor and raise RLIMIT_NOFILE",
            "src/train.py:5:9: DDP004 " + 'torch.load without map_location loads onto the saving device (GPU 0 on every rank); pass map_location="cpu"',
        ]
    )
    (tree / "setup.cfg").write_text("[flake8]\nextend-ignore = DDP005\n")
    configured = run("--select", "DDP", "src", tool="flake8")
    assert "DDP005" not in configured.stdout and "DDP004" in configured.stdout


def test_a_bad_switch_in_flake8s_config_or_the_environment_is_one_line_and_exit_2(run, tree):
    (tree / "setup.cfg").write_text("[flake8]\nddplint-no-project = maybe\n")
    result = run("--select", "DDP", "src", tool="flake8")
    assert (result.returncode, result.stderr) == (
        2, "flake8: ddplint: ddplint-no-project = 'maybe': not a boolean (use true or false, 1 or 0)\n"
    )
    (tree / "setup.cfg").write_text("[flake8]\n")
    expected = "environment variable DDPLINT_NO_CACHE = 'sometimes': not a boolean (use true or false, 1 or 0)\n"
    result = run("--select", "DDP", "src", tool="flake8", env={"DDPLINT_NO_CACHE": "sometimes"})
    assert (result.returncode, result.stderr) == (2, "flake8: ddplint: " + expected)
    result = run("src", env={"DDPLINT_NO_CACHE": "sometimes"})
    assert (result.returncode, result.stderr) == (2, "ddplint: error: " + expected)


@pytest.mark.parametrize(
    "switched_off",
    [{"args": ["--ddplint-no-cache"]}, {"config": "ddplint-no-cache = true"}, {"env": {"DDPLINT_NO_CACHE": "1"}}],
    ids=["option", "config", "environment"],
)
def test_the_flake8_plugin_writes_no_cache_when_told_not_to(run, tree, switched_off):
    (tree / "setup.cfg").write_text("[flake8]\n" + switched_off.get("config", "") + "\n")
    result = run("--select", "DDP", *switched_off.get("args", []), "src", tool="flake8", env=switched_off.get("env"))
    assert result.returncode == 1 and "src/train.py:5:9: DDP004" in result.stdout
    assert not (tree / ".ddplint_cache").exists()
    (tree / "setup.cfg").write_text("[flake8]\n")
    assert run("--select", "DDP", "src", tool="flake8", env={"DDPLINT_NO_CACHE": "0"}).returncode == 1
    assert (tree / ".ddplint_cache").is_dir()  # on by default


def test_a_dist_folder_is_linted_because_it_often_holds_distributed_code(run, tmp_path):
    (tmp_path / "pkg" / "dist").mkdir(parents=True)
    (tmp_path / "pkg" / "dist" / "utils.py").write_text("import torch.distributed\nx = torch.load('a.pt')\n")
    (tmp_path / "pkg" / "build").mkdir()
    (tmp_path / "pkg" / "build" / "copy.py").write_text("import torch.distributed\nx = torch.load('a.pt')\n")
    result = run("--no-cache", "pkg")
    assert "pkg/dist/utils.py:2:5: DDP004" in result.stdout
    assert "build" not in result.stdout


PARSER = "import argparse\nimport os\nimport torch.distributed\np = argparse.ArgumentParser()\np.add_argument('--local_rank', type=int)\nargs = p.parse_args()\n"


def test_evidence_in_the_file_decides_the_same_through_the_cli_and_flake8(run, tmp_path):
    """DDP012 on a `--local_rank` that is read in a file that shows ranks (it imports
    torch.distributed), and not on one never read or set from LOCAL_RANK; DDP014 on a save under a predicate named without a call, and not under a
    same-module predicate whose body tests the rank; DDP015 not on an empty ModuleList."""
    files = {
        "read.py": PARSER + "torch.cuda.set_device(args.local_rank)\n",
        "unread.py": PARSER + "rank = int(os.environ['LOCAL_RANK'])\n",
        "overwritten.py": PARSER + "args.local_rank = int(os.environ.get('LOCAL_RANK', args.local_rank))\nprint(args.local_rank)\n",
        "saves.py": textwrap.dedent(
            """\
            import torch
            import torch.distributed as dist
            from utils import is_main_process

            def should_save():
                return dist.get_rank() == 0

            def train(model):
                dist.init_process_group("nccl")
                if should_save():
                    torch.save(model.state_dict(), "a.pt")
                if is_main_process:
                    torch.save(model.state_dict(), "b.pt")
            """
        ),
        "model.py": textwrap.dedent(
            """\
            import torch.nn as nn
            import torch.distributed as dist

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(2, 2)
                    self.adapters = nn.ModuleList()

                def forward(self, x):
                    return self.fc(x)
            """
        ),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    expected = [
        "read.py:5:1: DDP012",
        "saves.py:13:9: DDP014",
    ]
    cli = run("check", "--no-cache", "--output-format", "concise", ".").stdout.splitlines()
    plugin = run("--select", "DDP", ".", tool="flake8").stdout.splitlines()
    for found in (cli, plugin):
        found = sorted(line.removeprefix("./") for line in found if ": DDP" in line)
        assert [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in found] == expected, found
        assert "`is_main_process` is not called" in found[1]


def test_a_question_about_a_function_the_program_did_not_read_is_unknown_not_a_crash(run):
    """Linted from this repository's root, tests/data/scripts' three projects sit in one index
    (the repository's), beside many other modules; DDP022 asked the program what a call in
    `imagenet_style/main.py`'s `main` hands on before the program had read that function, and
    crashed (KeyError: 'main'). A function the program has not read is unknown: no finding,
    no crash; the findings are those the folder gives when linted alone."""
    from pathlib import Path

    run.cwd = Path(__file__).resolve().parent.parent
    in_repository = run("check", "--no-cache", "--select", "DDP022", "tests/data/scripts")
    assert "internal error" not in in_repository.stdout + in_repository.stderr
    run.cwd = run.cwd / "tests" / "data" / "scripts"
    alone = run("check", "--no-cache", "--select", "DDP022", ".")
    assert [line.partition("scripts/")[2] for line in in_repository.stdout.splitlines() if ": DDP" in line] == [
        line for line in alone.stdout.splitlines() if ": DDP" in line]
