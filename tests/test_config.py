"""[tool.ddplint] in pyproject.toml, exclusion and .gitignore, as a user meets them."""

import os
import shutil
import subprocess
import textwrap

import pytest

from ddplint.engine.files import Exclusion, Pattern, discover, parse_ignore_lines

LOAD = "import torch.distributed\nx = torch.load('a.pt')\n"
SHARING = "import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\nmp.spawn(evaluate, nprocs=2)\n"


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _git_repository(root, *tracked):
    """Make `root` a git work tree with `tracked` added to the index (the rest untracked)."""
    if shutil.which("git") is None:
        pytest.skip("needs git: .gitignore speaks only inside a git work tree")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if tracked:
        subprocess.run(["git", "-C", str(root), "add", "-f", "--", *tracked], check=True)


def _codes_by_file(result):
    found = {}
    for line in result.stdout.splitlines():
        if ": DDP" in line:
            path, _, _, rest = line.split(":", 3)
            found.setdefault(path, []).append(rest.split()[0])
    return found


def test_select_ignore_and_per_file_ignores_from_pyproject(run, tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.ddplint]
                ignore = ["DDP005"]
                per-file-ignores = { "tests/**" = ["DDP004"], "legacy_*.py" = ["DDP"] }
            """,
            "src/a.py": LOAD + SHARING,
            "tests/test_a.py": LOAD,
            "src/legacy_b.py": LOAD,
        },
    )
    result = run(".")
    assert _codes_by_file(result) == {"src/a.py": ["DDP004"]}
    # --select on the command line replaces the configured selection; per-file-ignores still apply.
    assert _codes_by_file(run("--select", "DDP005", ".")) == {"src/a.py": ["DDP005"]}
    assert _codes_by_file(run("--extend-select", "DDP005", "src/a.py")) == {"src/a.py": ["DDP004"]}


def test_extend_select_and_unsafe_fixes(run, tmp_path):
    _write(
        tmp_path,
        {"pyproject.toml": '[tool.ddplint]\nselect = ["DDP004"]\nextend-select = ["DDP005"]\nunsafe-fixes = true\n', "a.py": LOAD + SHARING},
    )
    assert sorted(_codes_by_file(run("a.py"))["a.py"]) == ["DDP004", "DDP005"]
    assert run("--fix", "a.py").returncode == 0
    assert "file_system" not in (tmp_path / "a.py").read_text()


def test_nearest_pyproject_with_a_table_is_used_and_paths_are_relative_to_it(run, tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.ddplint]\nignore = ["DDP004"]\n',
            "pkg/pyproject.toml": "[project]\nname = 'no-ddplint-table'\n",
            "pkg/sub/pyproject.toml": '[tool.ddplint]\nextend-exclude = ["generated/"]\n',
            "pkg/sub/generated/g.py": LOAD,
            "pkg/sub/m.py": LOAD,
            "pkg/n.py": LOAD,
        },
    )
    assert _codes_by_file(run("pkg/sub")) == {"pkg/sub/m.py": ["DDP004"]}
    assert _codes_by_file(run("pkg")) == {}  # pkg/pyproject.toml has no table: the root one applies
    inner = tmp_path / "pkg" / "sub"
    assert run("--config", str(tmp_path / "pyproject.toml"), str(inner)).returncode == 0
    isolated = run("--isolated", "pkg/sub")
    assert set(_codes_by_file(isolated)) == {"pkg/sub/m.py", "pkg/sub/generated/g.py"}


def test_exclude_replaces_defaults_and_gitignore_is_honoured(run, tmp_path):
    _write(
        tmp_path,
        {
            ".gitignore": "ignored_dir/\n*_gen.py\n!keep_gen.py\n",
            "ignored_dir/a.py": LOAD,
            "x_gen.py": LOAD,
            "keep_gen.py": LOAD,
            "build/b.py": LOAD,
            ".ipynb_checkpoints/c-checkpoint.py": LOAD,
            "sub/.gitignore": "local.py\n",
            "sub/local.py": LOAD,
            "sub/other.py": LOAD,
        },
    )
    _git_repository(tmp_path)
    assert set(_codes_by_file(run("."))) == {"keep_gen.py", "sub/other.py"}
    _write(tmp_path, {"pyproject.toml": '[tool.ddplint]\nexclude = []\nrespect-gitignore = false\n'})
    assert len(_codes_by_file(run("."))) == 7  # every file, build/ and .ipynb_checkpoints/ included


def test_strict_mode_flags_every_load_and_keeps_the_cache_apart(run, tmp_path):
    plain = "import torch\nx = torch.load('a')\n"  # not distributed, not evidently a checkpoint
    _write(tmp_path, {"a.py": plain})
    assert run("a.py").returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nstrict = ["ddp004"]\n')
    strict = run("a.py")
    assert _codes_by_file(strict) == {"a.py": ["DDP004"]}
    assert "on every rank" not in strict.stdout and "map_location=\"cpu\"" in strict.stdout
    assert run("--isolated", "a.py").returncode == 0, "a cached strict result is not reused without strict"
    assert run("--fix", "a.py").returncode == 0
    assert (tmp_path / "a.py").read_text() == "import torch\nx = torch.load('a', map_location=\"cpu\")\n"


def test_strict_mode_in_worker_processes(run, tmp_path):
    files = {f"m{index}.py": "import torch\nx = torch.load('a')\n" for index in range(6)}
    _write(tmp_path, {"pyproject.toml": '[tool.ddplint]\nstrict = ["DDP004"]\n', **files})
    result = run("--jobs", "2", "--no-cache", ".")
    assert "Traceback" not in result.stderr
    assert sorted(_codes_by_file(result)) == sorted(files)


def test_strict_mode_in_the_api():
    import ddplint
    from ddplint.engine.lint import analyse
    from ddplint.engine.config import Settings

    settings = Settings(root=".", strict=["DDP004"])
    [rule] = settings.choose_rules(["DDP004"])
    assert rule.strict and rule.code == "DDP004"
    assert [d.code for d in analyse("import torch\nx = torch.load('a')\n", "a.py", [rule]).diagnostics] == ["DDP004"]
    assert ddplint.lint_source("import torch\nx = torch.load('a')\n", select=["DDP004"]) == []


def test_force_exclude_applies_exclusions_to_named_files(run, tmp_path):
    _write(tmp_path, {"pyproject.toml": '[tool.ddplint]\nextend-exclude = ["vendor/"]\n', "vendor/v.py": LOAD})
    assert run("vendor/v.py").returncode == 1  # named explicitly: linted
    skipped = run("--force-exclude", "vendor/v.py")
    assert skipped.returncode == 0 and "No problems found." in skipped.stdout
    fixed = run("--force-exclude", "--fix", "-", "--stdin-filename", "vendor/v.py", stdin=LOAD)
    assert fixed.returncode == 0 and fixed.stdout == LOAD


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('selct = ["DDP"]\nfoo = 1\n', "unknown keys foo, selct"),
        ('select = ["DDP999"]\n', "select: unknown rule code or prefix: DDP999"),
        ('per-file-ignores = { "a.py" = ["XYZ1"] }\n', "per-file-ignores: unknown rule code or prefix: XYZ1"),
        ('extend-select = ["DDP998"]\n', "extend-select: unknown rule code or prefix: DDP998"),
        ('ignore = "DDP004"\n', "ignore must be a list of strings"),
        ("unsafe-fixes = 1\n", "unsafe-fixes must be true or false"),
        ('strict = ["DDP014"]\n', "strict: DDP014: this rule has no strict mode (rules with one: DDP004)"),
        ('strict = ["DDP999"]\n', "strict: DDP999: unknown rule code"),
        ('strict = "DDP004"\n', "strict must be a list of strings"),
        ("select = [\n", "invalid TOML"),
    ],
)
def test_config_errors_name_the_problem_and_exit_2(run, tmp_path, table, expected):
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\n" + table)
    (tmp_path / "a.py").write_text(LOAD)
    result = run("a.py")
    assert result.returncode == 2
    assert expected in result.stderr and "pyproject.toml" in result.stderr
    assert "Traceback" not in result.stderr
    assert run("--isolated", "a.py").returncode == 1


def test_missing_config_file_is_an_error(run, tmp_path):
    result = run("--config", "nope.toml", ".")
    assert result.returncode == 2 and "nope.toml: cannot read" in result.stderr
    (tmp_path / "folder").mkdir()
    result = run("--config", "folder", ".")
    assert (result.returncode, result.stderr) == (2, "ddplint: error: folder: cannot read: is a directory\n")


@pytest.mark.parametrize("jobs", ["0", "-3", "many"])
def test_jobs_must_be_a_whole_number_of_at_least_one(run, tmp_path, jobs):
    (tmp_path / "a.py").write_text(LOAD)
    result = run("--jobs", jobs, "a.py")
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith("ddplint: error: argument --jobs/-j: ")


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "matches"),
    [
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "a/build", True, True),
        ("/build", "a/build", True, False),
        ("*.py", "a/b/c.py", False, True),
        ("a/*.py", "a/b/c.py", False, False),
        ("a/**/c.py", "a/b/d/c.py", False, True),
        ("a/**/c.py", "a/c.py", False, True),
        ("**/gen", "x/y/gen", True, True),
        ("docs/**", "docs/x/y.py", False, True),
        ("file?.py", "file1.py", False, True),
        ("file[0-9].py", "fileA.py", False, False),
        ("file[!0-9].py", "fileA.py", False, True),
        ("\\#hash.py", "#hash.py", False, True),
    ],
)
def test_gitignore_patterns(tmp_path, pattern, path, is_dir, matches):
    [parsed] = parse_ignore_lines([pattern], str(tmp_path))
    assert parsed.matches(str(tmp_path / path), is_dir) is matches


def test_negation_and_later_patterns_win(tmp_path):
    exclusion = Exclusion(parse_ignore_lines(["# comment", "", "*.py", "!keep.py"], str(tmp_path)), respect_gitignore=False)
    assert exclusion.excludes(str(tmp_path / "drop.py"), False)
    assert not exclusion.excludes(str(tmp_path / "keep.py"), False)


def test_per_file_glob_matches_files_inside_matched_folders(tmp_path):
    assert Pattern("tests", str(tmp_path)).matches_within(str(tmp_path / "tests" / "unit" / "t.py"))
    assert not Pattern("tests", str(tmp_path)).matches_within(str(tmp_path / "src" / "t.py"))


def test_discover_prunes_gitignored_folders_without_walking_them(tmp_path):
    _write(tmp_path, {".gitignore": "data/\n", "data/a.py": "", "b.py": ""})
    _git_repository(tmp_path)
    found = [os.path.relpath(t.path, tmp_path) for t in discover([str(tmp_path)], Exclusion.defaults(str(tmp_path)))]
    assert found == ["b.py"]


def test_gitignore_never_hides_a_file_git_tracks(run, tmp_path):
    # A `*dist*` line meant for build output also matches the distributed-training code; git
    # ignores only untracked files, and so does ddplint.
    _write(tmp_path, {".gitignore": "*dist*\n", "tools/dist_train.py": LOAD, "dist_utils/comm.py": LOAD, "dist_utils/scratch.py": LOAD, "train.py": LOAD})
    _git_repository(tmp_path, "tools/dist_train.py", "dist_utils/comm.py", "train.py")
    assert set(_codes_by_file(run("."))) == {"tools/dist_train.py", "dist_utils/comm.py", "train.py"}
    found = [os.path.relpath(t.path, tmp_path) for t in discover([str(tmp_path)], Exclusion.defaults(str(tmp_path)))]
    assert found == ["dist_utils/comm.py", "tools/dist_train.py", "train.py"]  # the untracked scratch.py stays ignored


def test_a_named_folder_that_gitignore_ignores_is_still_linted(run, tmp_path):
    # Naming a folder asks for it (the benchmarks lint their git-ignored corpus this way); only
    # an untracked file inside an ignored folder that discovery entered for its tracked files
    # stays out.
    _write(tmp_path, {".gitignore": "corpus/\n", "corpus/pkg/a.py": LOAD, "train.py": LOAD})
    _git_repository(tmp_path, "train.py")
    assert set(_codes_by_file(run("corpus"))) == {"corpus/pkg/a.py"}
    assert set(_codes_by_file(run("."))) == {"train.py"}


def test_gitignore_is_not_read_outside_a_git_work_tree(run, tmp_path):
    # An unpacked archive holds only what the repository tracked: nothing in it is ignored.
    _write(tmp_path, {".gitignore": "*dist*\ndata/\n", "tools/dist_train.py": LOAD, "data/prepare.py": LOAD, "train.py": LOAD})
    assert set(_codes_by_file(run("."))) == {"tools/dist_train.py", "data/prepare.py", "train.py"}


def test_lint_paths_reads_config_when_asked(tmp_path, monkeypatch):
    import ddplint

    _write(tmp_path, {"pyproject.toml": '[tool.ddplint]\nper-file-ignores = { "skip.py" = ["DDP004"] }\n', "skip.py": LOAD, "keep.py": LOAD})
    monkeypatch.chdir(tmp_path)
    with_config = {os.path.basename(r.path): [d.code for d in r.diagnostics] for r in ddplint.lint_paths(["."], config=True)}
    assert with_config == {"keep.py": ["DDP004"], "skip.py": []}
    without = {os.path.basename(r.path): [d.code for d in r.diagnostics] for r in ddplint.lint_paths(["."])}
    assert without == {"keep.py": ["DDP004"], "skip.py": ["DDP004"]}
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nwat = 1\n')
    with pytest.raises(ddplint.ConfigError, match="unknown key wat"):
        list(ddplint.lint_paths(["."], config=True))
