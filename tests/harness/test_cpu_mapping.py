"""`ddplint verify --script --cpu`: a script written for GPUs runs unedited on CPU ranks, and
the report says what was mapped and which findings the mapping cannot judge."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Hard-coded GPU placement throughout; DDP003 (no set_epoch) is what the runs can show, and the
# load of a checkpoint without map_location is DDP004, which the mapping hides.
GPU_WRITTEN = """
    import os
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    if torch.cuda.device_count() < int(os.environ["WORLD_SIZE"]):
        raise SystemExit("needs one GPU per rank")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(torch.nn.Linear(4, 2).cuda(), device_ids=[local_rank], output_device=local_rank)
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "start.pt")
    dist.barrier()
    model.module.load_state_dict(torch.load("start.pt"))
    data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
    loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data), pin_memory=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.cuda(local_rank))
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
    dist.destroy_process_group()
"""


def test_gpu_written_script_reaches_verdicts_on_cpu_ranks(tmp_path):
    pytest.importorskip("torch")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(textwrap.dedent(GPU_WRITTEN))
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "ddplint", "verify", "--script",
                           str(project / "train.py"), "--cpu", "--timeout", "90",
                           "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = json.loads(out.read_text())
    verdicts = {f["code"]: f for f in report["findings"]}
    assert verdicts["DDP003"]["verdict"] == "CONFIRMED", proc.stdout
    assert verdicts["DDP004"]["verdict"] == "NEEDS GPU"
    assert "CPU mapping" in verdicts["DDP004"]["reason"]
    assert report["cpu_mapping"] == "--cpu"
    assert report["runs"]["before"]["completed"], proc.stdout
    counts = report["runs"]["before"]["ranks"][0]["cpu_mapping"]["counts"]
    for call in ("torch.cuda.set_device", "backend nccl->gloo", "Module.cuda()", "DDP device_ids",
                 "DDP output_device", "torch.device(cuda)", "Tensor.cuda()"):
        assert counts.get(call, 0) >= 1, counts
    assert counts["Tensor.cuda()"] == 8  # 4 batches a rank, 2 epochs
    assert "CPU mapping on (--cpu)" in proc.stdout
    line = next(i for i, text in enumerate(textwrap.dedent(GPU_WRITTEN).splitlines(), 1)
                if "y.cuda(local_rank)" in text)
    assert f"mapped to the CPU: Tensor.cuda() x16 (train.py:{line})" in proc.stdout


# Run in a plain process: the mapping alone, without torchrun or the probes.
MAPPED = """
    import json
    import torch
    from ddplint.harness import cpu_mapping, probes
    torch.save({"w": torch.ones(2)}, "saved_on_gpu.pt")
    probes.retag_checkpoint("saved_on_gpu.pt", lambda key, old: "cuda:0")
    cpu_mapping.install()
    assert torch.load("saved_on_gpu.pt", map_location="cuda:1")["w"].device.type == "cpu"
    try:
        torch.load("saved_on_gpu.pt")  # DDP004's symptom shows, as on any CPU machine
    except RuntimeError as exc:
        print("no map_location:", exc)
    assert torch.cuda.is_available()
    assert torch.zeros(2, device="cuda:1").device.type == "cpu"
    assert torch.ones(2).to(1).device.type == "cpu"
    assert isinstance(torch.device("cuda", 1), torch.device) and torch.device(1).type == "cpu"
    try:
        torch.device("cuda:None")  # what --local_rank with no value gives: an error on GPUs too
    except RuntimeError as exc:
        print("malformed device:", exc)
    stream = torch.cuda.Stream()  # a prefetcher's side stream, timed with events
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.cuda.stream(stream):
        batch = torch.ones(2).cuda(non_blocking=True)
    torch.cuda.current_stream().wait_stream(stream)
    batch.record_stream(torch.cuda.current_stream())
    end.record()
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    with torch.cuda.device(1):
        assert torch.cuda.current_device() == 1
    assert torch.cuda.current_device() == 0
    try:
        def step(scale=torch.ones(1).cuda()):  # DDP001: evaluated at import, not mapped
            return scale
    except (AssertionError, RuntimeError) as exc:
        print("import-time crash:", exc)
    print(json.dumps(cpu_mapping.facts()["counts"]))
"""

# Issue 40, 7 and 8: a script written for torch.accelerator, as current examples are, and the
# calls a GPU refuses, in a plain process.
ACCELERATOR = """
    import json, torch, torch.distributed as dist
    from torch.utils.data import DataLoader
    from ddplint.harness import cpu_mapping
    cpu_mapping.install()
    assert torch.accelerator.is_available() and torch.accelerator.device_count() == 2
    accelerator = torch.accelerator.current_accelerator()
    device = torch.device(f"{accelerator}:1")
    torch.accelerator.set_device_index(1)
    assert device.type == "cpu" and torch.accelerator.current_device_index() == 1
    assert torch.cuda.current_device() == 1
    assert dist.get_default_backend_for_device(accelerator) == "gloo"
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.BatchNorm1d(3)))
    assert type(model[0]) is torch.nn.BatchNorm1d
    # torch's own question gets the true answer: no pinning on a CPU build.
    assert not next(iter(DataLoader([torch.ones(2)], pin_memory=True))).is_pinned()
    for bad in (None, "cuda:None"):
        try:
            torch.cuda.set_device(bad)
        except (ValueError, RuntimeError) as exc:
            print("refused:", exc)
    print(json.dumps(cpu_mapping.facts()["counts"]))
"""


def _mapped(tmp_path, source: str, **env) -> subprocess.CompletedProcess:
    script = tmp_path / "mapped.py"
    script.write_text(textwrap.dedent(source))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", **env}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=env)


def test_torch_accelerator_is_mapped_and_a_gpus_refusals_stay(tmp_path):
    pytest.importorskip("torch")
    proc = _mapped(tmp_path, ACCELERATOR, LOCAL_WORLD_SIZE="2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        "refused: Expected a torch.device with a specified index or an integer, but got:None",
        "refused: Invalid device string: 'cuda:None'"]
    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "torch.accelerator.is_available": 1, "torch.accelerator.device_count": 1,
        "torch.accelerator.current_accelerator": 1, "torch.device(cuda)": 1,
        "torch.accelerator.set_device_index": 1, "torch.accelerator.current_device_index": 1,
        "torch.cuda.current_device": 1, "backend nccl->gloo": 1,
        "SyncBatchNorm.convert_sync_batchnorm (kept as BatchNorm)": 1}


def test_mapping_leaves_torch_and_parameter_defaults_alone(tmp_path):
    pytest.importorskip("torch")
    proc = _mapped(tmp_path, MAPPED)
    assert proc.returncode == 0, proc.stderr
    assert "import-time crash:" in proc.stdout
    assert "malformed device: Invalid device string: 'cuda:None'" in proc.stdout
    assert "no map_location: Attempting to deserialize object on a CUDA device" in proc.stdout
    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "torch.load(map_location=cuda)": 1, "torch.cuda.is_available": 1,
        "torch.zeros(device=cuda)": 1, "Tensor.to(cuda)": 1,
        "torch.device(cuda)": 2, "torch.cuda.Stream": 1, "torch.cuda.Event": 2,
        "torch.cuda.stream": 1, "Tensor.cuda()": 1, "torch.cuda.current_stream": 2,
        "Tensor.record_stream()": 1, "torch.cuda.device": 1, "torch.cuda.current_device": 2}
