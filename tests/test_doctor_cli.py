"""`ddplint doctor` as a user runs it: its report in text, JSON and SARIF, its exit codes, the live
probes leaving nothing behind, and the doctor working without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import pytest

from ddplint.commands.docs import DOCTOR_MD, doctor_markdown
from ddplint.doctor.checks import all_checks
from ddplint.doctor.cli import main, split
from ddplint.doctor.probes import shm_probe, torch_probe
from ddplint_test_support import REPO, cli_env, needs_torch
from doctor_machine import Machine, Statvfs

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture
def machine(tmp_path) -> Machine:
    return Machine(tmp_path).healthy()


def doctor(machine: Machine, capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), system=machine.system)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_healthy_machine_exits_0_and_says_what_it_saw(machine, capsys):
    code, out, _ = doctor(machine, capsys, "torchrun", "--nproc_per_node", "4", "train.py")
    assert code == 0
    assert "  machine      4 NVIDIA GPU(s): NVIDIA A100-SXM4-80GB (driver 550.54.15, CUDA 12.4)" in out
    assert "torch 2.5.1+cu121 (CUDA 12.1)" in out and "ranks per node: 4; nodes: 1" in out
    assert "could not check DDPE406 local-rendezvous: the live probe was not run (--probe runs it)" in out
    assert out.rstrip().endswith("No problems found. 1 check could not run (see 'could not check' above).")


def test_a_problem_is_one_line_with_its_place_code_severity_and_fix_and_exits_1(machine, capsys):
    machine.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    machine.script(machine.project.joinpath("train.py").read_text().replace(
        "parser = argparse.ArgumentParser()", "parser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int)"
    ).replace('int(os.environ["LOCAL_RANK"])', "args.local_rank"))
    code, out, _ = doctor(machine, capsys, "torchrun", "--nproc_per_node", "4", "train.py")
    assert code == 1
    problems = [line for line in out.splitlines() if " DDPE" in line]
    assert any(line.startswith("environment: DDPE201 warning: CUDA_LAUNCH_BLOCKING=1: ") and "; fix: unset" in line
               for line in problems)
    assert any(line.startswith("train.py:9:1: DDPE402 error: --local_rank only") for line in problems)
    assert "Found 2 problems (1 error, 1 warning)." in out


def test_without_a_launch_the_launch_checks_say_why_on_one_line(machine, capsys):
    code, out, _ = doctor(machine, capsys)
    assert code == 0
    line = next(line for line in out.splitlines() if line.endswith(": no launch command was given"))
    assert "DDPE401 ranks-per-gpu" in line and "DDPE103 shared-memory" in line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["missing.sh"], "missing.sh: no such file"),
        (["make", "train"], "not a launch command: make train"),
        (["--shm-per-worker", "lots", "torchrun", "train.py"], "not a size: 'lots'"),
        (["--workers", "-2", "torchrun", "train.py"], "--workers must be 0 or more"),
    ],
)
def test_usage_errors_exit_2_with_one_line(machine, capsys, argv, message):
    code, out, err = doctor(machine, capsys, *argv)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_the_doctors_options_come_before_the_launch_command():
    assert split(["--format", "json", "--probe", "torchrun", "--nproc_per_node", "2", "train.py"]) == (
        ["--format", "json", "--probe"], ["torchrun", "--nproc_per_node", "2", "train.py"])
    assert split(["--workers", "2", "--", "--weird.sh"]) == (["--workers", "2"], ["--weird.sh"])


def test_json_lists_problems_checks_not_run_and_what_was_seen(machine, capsys):
    machine.shm_size = Statvfs(64 * 1024**2)
    code, out, _ = doctor(machine, capsys, "--format", "json", "torchrun", "--nproc_per_node", "4", "train.py")
    document = json.loads(out)
    assert code == 1 and document["launch"] == "torchrun --nproc_per_node 4 train.py"
    assert {p["code"] for p in document["problems"]} == {"DDPE103"}
    problem = document["problems"][0]
    assert problem["subject"] == "machine" and problem["severity"] == "warning" and problem["location"] is None
    assert [u["code"] for u in document["unchecked"]] == ["DDPE406"]
    assert set(document["seen"]) == {"machine", "software", "environment", "launch", "probes"}


def test_sarif_is_valid_and_locates_problems_in_files(machine, capsys):
    machine.remove_package("torch")
    machine.package("torch", "2.5.1+cpu", cuda=None)
    code, out, _ = doctor(machine, capsys, "--format", "sarif", "torchrun", "--nproc_per_node", "4", "train.py")
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    run = log["runs"][0]
    assert code == 1 and [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [c.code for c in all_checks()]
    nccl = next(result for result in run["results"] if result["ruleId"] == "DDPE407")
    assert nccl["locations"][0]["physicalLocation"]["region"]["startLine"] == 13
    assert run["invocations"][0]["toolExecutionNotifications"][0]["descriptor"]["id"] == "DDPE406"


def test_the_list_of_checks(machine, capsys):
    code, out, _ = doctor(machine, capsys, "--list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [c.code for c in all_checks()]


def test_the_shared_memory_probe_allocates_and_leaves_nothing(machine, capsys):
    facts = machine.facts()
    facts.system.shm = str(machine.shm)
    facts.shm = type(facts.shm)(str(machine.shm), 16 * 1024**3, 16 * 1024**3)
    facts.options.shm_per_worker = 1024**2  # 4 ranks x 4 workers x 1 MiB
    probe = shm_probe(facts)
    assert (probe.name, probe.failed, probe.detail) == ("shm", False, f"allocated 16.0 MiB in {machine.shm}")
    assert list(machine.shm.iterdir()) == []
    assert "live probe: allocating 16.0 MiB" in capsys.readouterr().err


@needs_torch
def test_the_torch_probe_meets_over_gloo_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    machine = Machine(tmp_path / "machine")
    machine.package("torch", "2.13.0", cuda=None)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    facts = machine.facts(None)
    facts.environment = {key: value for key, value in os.environ.items() if key != "TMPDIR"}
    probe = torch_probe(facts)
    assert not probe.failed, probe.detail
    assert probe.values["sum"] == 3.0 and probe.values["gpus"] >= 0 and probe.values["timeouts"]["default"] > 0
    assert list((tmp_path / "tmp").iterdir()) == []
    assert "live probe: two processes import torch" in capsys.readouterr().err


def test_the_doctor_runs_without_torch_and_never_imports_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nimport torch.distributed as dist\ndist.init_process_group('gloo')\n")
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # importing torch now fails\n"
        "from ddplint.commands.cli import main\n"
        "status = main(['doctor', '--format', 'json', 'torchrun', '--nproc_per_node', '2', 'train.py'])\n"
        "print('EXIT', status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    report, _, exit_line = done.stdout.rpartition("EXIT")
    assert exit_line.strip() in ("0", "1") and "Traceback" not in done.stderr
    assert json.loads(report)["launch"] == "torchrun --nproc_per_node 2 train.py"


def test_doctor_on_this_machine_from_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ddplint", "doctor"], cwd=tmp_path, env=cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.startswith("ddplint doctor: this machine\n  machine ")
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_doctor_reference_is_generated_and_current():
    assert DOCTOR_MD.read_text(encoding="utf-8") == doctor_markdown()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "ddplint doctor" in readme and "docs/doctor.md" in readme


def test_a_bug_in_a_check_is_said_and_exits_2_while_the_other_checks_run(machine, capsys, monkeypatch):
    from ddplint.doctor import checks

    def broken(facts):
        raise KeyError("oops")

    monkeypatch.setitem(checks._REGISTRY, "DDPE205", checks.Check("DDPE205", "errors-hang", "environment", broken))
    machine.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    code, out, _ = doctor(machine, capsys, "torchrun", "--nproc_per_node", "4", "train.py")
    assert code == 2
    assert "could not check DDPE205 errors-hang: internal error (KeyError: 'oops')" in out
    assert "environment: DDPE201 warning: CUDA_LAUNCH_BLOCKING=1" in out
