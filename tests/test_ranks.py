"""The rank-guard analysis shared by the rank rules: which tests mean "rank 0 only"."""

import sys
import types

import libcst as cst
import pytest

from ddplint.analyses.ranks import DISTRIBUTED, NONZERO, NOT_DISTRIBUTED, POSITIVE, UNKNOWN, classify


def guard(source: str):
    return classify(cst.parse_expression(source))


@pytest.mark.parametrize(
    "source",
    [
        "rank == 0",
        "0 == rank",
        "args.rank == 0",
        "self.global_rank == 0",
        "dist.get_rank() == 0",
        "torch.distributed.get_rank() == 0",
        "int(os.environ['RANK']) == 0",
        "os.environ.get('LOCAL_RANK', '0') == 0",
        "os.environ.get('RANK', '0') == '0'",
        "rank0_only()",
        "not rank",
        "args.local_rank in (-1, 0)",
        "args.local_rank in [-1, 0]",
        "RANK in {-1, 0}",
        "LOCAL_RANK == 0",
        "local_rank <= 0",
        "rank < 1",
        "args.rank % ngpus_per_node == 0",
        "is_main_process()",
        "utils.is_main_process()",
        "is_master",
        "self.is_rank_zero",
        "accelerator.is_main_process",
        "trainer.is_global_zero",
        "master_process",
        "env['master_process']",  # a set-up helper's dict of flags
        "not args.distributed or rank == 0",
        "args.distributed and rank == 0",
        "rank == 0 and epoch % 10 == 0",
        "world_size == 1 or dist.get_rank() == 0",
        "not dist.is_initialized() or dist.get_rank() == 0",
        "not (rank != 0)",
        "rank == 0 or local_rank == -1",
        "not options.distributed or options.dist_rank == 0",
        "self.distributed_rank == 0",
        "'RANK' not in os.environ or int(os.environ['RANK']) == 0",
        "not config.distributed.data_parallel or dist.get_rank() == 0",  # a config section's switch
        "not cfg.ddp.enabled or rank == 0",
        # a rank of a distributed run is a number: no string but a number's, nor None, is one
        "local_rank in {'cpu', 0}",
        "rank in (None, 0)",
        "args.local_rank in ('cpu', '0')",
        # a rank is an int: it is an instance of no device or tensor type
        "isinstance(rank, torch.device) or rank == 0",
    ],
)
def test_rank_zero_guards(source):
    test = guard(source)
    assert test.true_only_zero and not test.true_never_zero
    assert test.false_never_zero or not test.false_only_zero


@pytest.mark.parametrize(
    "source",
    [
        "rank != 0",
        "dist.get_rank() != 0",
        "rank > 0",
        "rank >= 1",
        "args.local_rank not in (-1, 0)",
        "not is_main_process()",
        "not accelerator.is_main_process",
        "rank",
        "args.distributed and rank != 0",
        "os.environ['RANK'] != '0'",
    ],
)
def test_other_rank_guards(source):
    assert guard(source) == NONZERO


@pytest.mark.parametrize(
    "source, expected",
    [
        ("rank == 1", POSITIVE),
        ("rank != 1", POSITIVE.negated()),
        ("local_rank == -1", NOT_DISTRIBUTED),
        ("args.world_size > 1", DISTRIBUTED),
        ("world_size == 1", NOT_DISTRIBUTED),
        ("not args.distributed", NOT_DISTRIBUTED),
        ("dist.is_initialized()", DISTRIBUTED),
        ("epoch == 0", UNKNOWN),
        ("step % 100 == 0", UNKNOWN),
        ("args.save", UNKNOWN),
        ("rank == other", UNKNOWN),
        ("rank == 0 or epoch == 0", UNKNOWN.__class__(false_never_zero=True)),
        ("rank in ranks", UNKNOWN),
        ("node_rank == 0", UNKNOWN),
        # torch.distributed is available in every distributed run; CUDA says nothing
        ("dist.is_available()", DISTRIBUTED),
        ("torch.cuda.is_available()", UNKNOWN),
        ("is_available()", UNKNOWN),
        # torchrun sets RANK, LOCAL_RANK and WORLD_SIZE in every process it starts
        ("'LOCAL_RANK' in os.environ", DISTRIBUTED),
        ("'WORLD_SIZE' not in os.environ", NOT_DISTRIBUTED),
        ("'MASTER_PORT' in os.environ", UNKNOWN),
        ("'RANK' in config", UNKNOWN),
        ("os.environ.get('LOCAL_RANK')", DISTRIBUTED),  # a string: "0" is true
        ("rank in ('cpu', 'mps')", NOT_DISTRIBUTED),  # no rank of a distributed run is a device name
        ("rank not in ('cpu',)", DISTRIBUTED),
        ("rank in ('cpu', 1)", POSITIVE),
        ("rank in (cpu, 0)", UNKNOWN),  # a name may hold any number
        ("isinstance(rank, torch.device)", NOT_DISTRIBUTED),
        ("not isinstance(local_rank, (torch.device, list))", DISTRIBUTED),
        ("isinstance(rank, int)", UNKNOWN),
        ("isinstance(rank, (int, torch.device))", UNKNOWN),
        ("isinstance(rank, numbers.Integral)", UNKNOWN),
        ("isinstance(rank, str)", UNKNOWN),  # os.environ["RANK"] unparsed is a string
        ("isinstance(rank, device_types)", UNKNOWN),  # a name may hold int among its types
        ("isinstance(device, torch.device)", UNKNOWN),  # not a rank: may be a device
        ("'LOCAL_RANK' in os.environ and os.environ['LOCAL_RANK']", DISTRIBUTED),
    ],
)
def test_other_tests(source, expected):
    assert guard(source) == expected


def test_rank_zero_or_anything_is_not_a_guard():
    assert not guard("rank == 0 or args.save_every_rank").true_only_zero


# -- regions: where only rank 0 (or only the other ranks) get ---------------------------

import textwrap  # noqa: E402

from ddplint.analyses.ranks import RankRegions  # noqa: E402
from ddplint.rules.rule import Rule  # noqa: E402


class _Probe(Rule):
    """Records, for every `probe()` call, who reaches it: "zero", "others", "all" or "none"."""

    code, name, message, needles = "DDP999", "probe", "probe", ("probe",)
    analyses = (RankRegions,)

    def __init__(self, model):
        super().__init__(model)
        self.ranks = model.get(RankRegions)
        self.seen = []

    def visit_Call(self, node):
        if getattr(node.func, "value", None) == "probe":
            only, never = self.ranks.only_rank_zero, self.ranks.never_rank_zero
            self.seen.append({(True, False): "zero", (False, True): "others", (False, False): "all"}.get((only, never), "none"))


def regions(source):
    module = cst.parse_module(textwrap.dedent(source))
    from ddplint.engine.lint import prepare, traverse

    model, (probe,) = prepare(module, [_Probe])
    traverse(module, model, [probe])
    return probe.seen, probe.ranks


@pytest.mark.parametrize(
    "source, expected",
    [
        ("if rank == 0:\n    probe()\nelse:\n    probe()\nprobe()", ["zero", "others", "all"]),
        ("if rank == 0: probe()", ["zero"]),
        ("if rank != 0:\n    probe()\nelif x:\n    probe()", ["others", "zero"]),
        ("def f(rank):\n    probe()\n    if rank != 0:\n        return\n    probe()\nprobe()", ["all", "zero", "all"]),
        ("for b in data:\n    if not is_main_process():\n        continue\n    probe()\nprobe()", ["zero", "all"]),
        ("if rank == 0:\n    def later():\n        probe()", ["all"]),
        ("@rank_zero_only\ndef log():\n    probe()", ["zero"]),
        ("@main_process\ndef log():\n    probe()", ["zero"]),
        ("if not args.distributed:\n    probe()", ["none"]),
        ("if rank == 0 and epoch == 3:\n    probe()\nelse:\n    probe()", ["zero", "all"]),
        ("if epoch == 0:\n    probe()", ["all"]),
    ],
)
def test_regions(source, expected):
    assert regions(source)[0] == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        # rank tests held in variables and attributes
        ("verbose = rank == 0\nif verbose:\n    probe()\nelse:\n    probe()", ["zero", "others"]),
        ("def f():\n    master = dist.get_rank() == 0\n    if master:\n        probe()\n    if not master:\n        return\n    probe()", ["zero", "zero"]),
        ("def main(args):\n    args.save_logs = args.logs and is_master(args)\n\ndef train(args):\n    if args.save_logs:\n        probe()", ["zero"]),
        ("class T:\n    def save(self):\n        if self.should_save:\n            probe()\n    def __init__(self, rank):\n        self.should_save = rank == 0", ["zero"]),
        ("class T:\n    def __init__(me, rank):\n        me.chief = rank == 0\n    def save(this):\n        if this.chief:\n            probe()", ["zero"]),
        ("def f():\n    if master:\n        probe()\nmaster = int(os.environ['RANK']) == 0", ["zero"]),
        ("verbose = False\nif distributed:\n    verbose = rank == 0\nif verbose:\n    probe()", ["zero"]),
        ("v = v and rank == 0\nif v:\n    probe()", ["zero"]),
        ("def f(args):\n    save: bool\n    if args.eval:\n        save = False\n    else:\n        save = args.rank == 0\n    if save:\n        probe()", ["zero"]),
        ("first = rank == 0\nlog = first and epoch == 3\nif log:\n    probe()", ["zero"]),
        # `|=` and `&=` combine with the value bound before (LUPerson-NL's `is_save`)
        ("save = dist.is_initialized() and rank == 0\nsave |= not dist.is_initialized()\nif save:\n    probe()", ["zero"]),
        ("save = rank == 0\nsave &= epoch > 3\nif save:\n    probe()", ["zero"]),
        ("save = rank == 0\nsave |= epoch > 3\nif save:\n    probe()", ["all"]),
        ("save = rank == 0\nsave += 1\nif save:\n    probe()", ["all"]),
        # a value assigned only where no distributed run gets (nanoGPT's single-process branch)
        ("ddp = int(os.environ.get('RANK', -1)) != -1\nif ddp:\n    master_process = int(os.environ['RANK']) == 0\nelse:\n    master_process = True\nif master_process:\n    probe()", ["zero"]),
        ("if world_size == 1:\n    verbose = True\nelif x:\n    verbose = rank == 0\nelse:\n    verbose = local_rank == 0\nif verbose:\n    probe()", ["zero"]),
        ("if args.debug:\n    verbose = True\nelse:\n    verbose = rank == 0\nif verbose:\n    probe()", ["all"]),
        # a constant, then the other one under a rank test (SciMON's trainers)
        ("class T:\n    def __init__(self, args):\n        self.verbose = True\n        if args.distributed:\n"
         "            if dist.get_rank() != 0:\n                self.verbose = False\n    def save(self):\n"
         "        if self.verbose:\n            probe()", ["zero"]),
        ("verbose = False\nif rank == 0:\n    verbose = True\nif verbose:\n    probe()", ["zero"]),
        ("verbose = True\nif epoch > 3:\n    verbose = False\nif verbose:\n    probe()", ["all"]),
        # the same, with the other constant also set where no rank of a distributed run gets
        # (DeVLBert's `default_gpu`: True on rank 0 under `if args.local_rank != -1:`, or in the
        # one-process `else:`)
        ("verbose = False\nif args.local_rank != -1:\n    rank = dist.get_rank()\n    if rank == 0:\n        verbose = True\n"
         "else:\n    verbose = True\nif verbose:\n    probe()", ["zero"]),
        # not where a rank of a distributed run also sets it by a test that is no rank test, or unconditionally
        ("verbose = False\nif args.local_rank != -1:\n    if epoch > 3:\n        verbose = True\n"
         "else:\n    verbose = True\nif verbose:\n    probe()", ["all"]),
        ("verbose = False\nif args.local_rank != -1:\n    if rank == 0:\n        verbose = True\n"
         "else:\n    verbose = True\nverbose = True\nif verbose:\n    probe()", ["all"]),
        ("verbose = False\nif args.local_rank != -1:\n    if rank == 0:\n        verbose = True\n    if x:\n        verbose = True\n"
         "else:\n    verbose = True\nif verbose:\n    probe()", ["all"]),
        ("verbose = True\nif rank != 0:\n    verbose = False\nverbose = True\nif verbose:\n    probe()", ["all"]),
        # not rank tests: another value that is not one, a parameter, a constant alone
        ("verbose = rank == 0\nverbose = True\nif verbose:\n    probe()", ["all"]),
        ("verbose = rank == 0\nverbose = args.verbose\nif verbose:\n    probe()", ["all"]),
        # (flow-insensitive: the parameter's own value counts too, though it is overwritten)
        ("def f(verbose):\n    verbose = verbose and rank == 0\n    if verbose:\n        probe()", ["all"]),
        ("def f(verbose):\n    if verbose:\n        probe()\nverbose = rank == 0", ["all"]),
        ("for verbose in (rank == 0, True):\n    if verbose:\n        probe()", ["all"]),
        ("debug = False\nif debug:\n    probe()", ["all"]),
        ("class T:\n    def a(self):\n        self.go = rank == 0\n    def b(self):\n        self.go = True\n    def c(self):\n        if self.go:\n            probe()", ["all"]),
        ("class A:\n    def a(self):\n        self.go = rank == 0\nclass B:\n    def c(self):\n        if self.go:\n            probe()", ["all"]),
        # mp.spawn hands the function it starts the process index first, whatever its name
        ("import torch.multiprocessing as mp\ndef work(worker_idx, args):\n    verbose = worker_idx == 0\n    if verbose:\n"
         "        probe()\nmp.spawn(work, nprocs=2, args=(None,))", ["zero"]),
        ("import torch.multiprocessing as mp\ndef work(worker_idx, args):\n    if worker_idx == 0:\n        probe()\n"
         "mp.spawn(work, nprocs=2, args=(None,))", ["zero"]),
        # not its other parameters, nor the first one of a function no spawn starts
        ("import torch.multiprocessing as mp\ndef work(worker_idx, part):\n    if part == 0:\n        probe()\n"
         "mp.spawn(work, nprocs=2, args=(0,))", ["all"]),
        ("def work(worker_idx, args):\n    if worker_idx == 0:\n        probe()", ["all"]),
    ],
)
def test_rank_tests_held_in_variables(source, expected):
    assert regions(source)[0] == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        # a flag the module starts its process group under, whatever its name, either way round
        ("import torch.distributed as dist\nif args.distribution:\n    dist.init_process_group('nccl')\nif rank == 0 or not args.distribution:\n    probe()", ["zero"]),
        ("import torch.distributed as dist\ndef main(single):\n    if single:\n        pass\n    else:\n        dist.init_process_group('nccl')\n    if single or dist.get_rank() == 0:\n        probe()", ["zero"]),
        ("from torch.distributed import init_process_group\nclass T:\n    def __init__(self):\n        if not self.one_gpu: init_process_group('nccl')\n    def save(self):\n        if self.one_gpu or self.rank == 0:\n            probe()", ["zero"]),
        # not when a start is not under it, nor when the flag's branch starts nothing itself
        ("import torch.distributed as dist\nif args.distribution:\n    dist.init_process_group('nccl')\ndef again():\n    dist.init_process_group('gloo')\nif rank == 0 or not args.distribution:\n    probe()", ["all"]),
        ("import torch.distributed as dist\nif args.distribution:\n    setup()\nif rank == 0 or not args.distribution:\n    probe()", ["all"]),
        ("import torch.distributed as dist\nif args.distribution:\n    dist.init_process_group('nccl')\nelse:\n    dist.init_process_group('gloo')\nif rank == 0 or not args.distribution:\n    probe()", ["all"]),
        # a flag compared with a constant: the other constants, and `!=`, are one-process runs
        # ("none": no rank of a distributed run gets there)
        ("import torch.distributed as dist\ndef main(args):\n    if args.dist == 'OFF':\n        probe()\n    if args.dist == 'ON':\n        dist.init_process_group('nccl')", ["none"]),
        ("import torch.distributed as dist\ndef main(args):\n    if args.dist == 'ON':\n        dist.init_process_group('nccl')\n    if args.dist != 'ON' or dist.get_rank() == 0:\n        probe()", ["zero"]),
        ("import torch.distributed as dist\nmode = get_mode()\nif mode == 1:\n    dist.init_process_group('nccl')\nif mode == 0:\n    probe()", ["none"]),
        ("import torch.distributed as dist\ndef main(args):\n    if args.dist == 'ON':\n        dist.init_process_group('nccl')\n    if args.dist == 'ON':\n        probe()", ["all"]),
        # the group started under `!= "single"`: another constant may still be a distributed run
        ("import torch.distributed as dist\ndef main(args):\n    if args.mode != 'single':\n        dist.init_process_group('nccl')\n    if args.mode == 'multi':\n        probe()", ["all"]),
        ("import torch.distributed as dist\ndef main(args):\n    if args.mode != 'single':\n        dist.init_process_group('nccl')\n    if args.mode == 'single':\n        probe()", ["none"]),
        # not when another start is under no comparison of the flag
        ("import torch.distributed as dist\ndef main(args):\n    if args.dist == 'ON':\n        dist.init_process_group('nccl')\n    dist.init_process_group('gloo')\n    if args.dist == 'OFF':\n        probe()", ["all"]),
    ],
)
def test_flags_that_start_the_process_group(source, expected):
    assert regions(source)[0] == expected


def test_functions_called_only_under_a_guard():
    _, probe = regions(
        """
        def save(): pass
        def log(): pass
        def both(): pass
        def nested(): log()
        if rank == 0:
            save()
            both()
            nested()
        both()
        """
    )
    assert probe.functions_only_rank_zero_calls() == {"save", "log", "nested"}


# -- the rank rules on their fixtures, and the DDP012 fix under argparse ------------------

from pathlib import Path  # noqa: E402

from ddplint.engine.lint import analyse  # noqa: E402
from ddplint.fixing.fixer import fix_text  # noqa: E402
from ddplint.rules import all_rules, rule_by_code  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("code", ["DDP008", "DDP009", "DDP012", "DDP013", "DDP014"])
def test_fixtures_show_their_rule(code):
    files = sorted((FIXTURES / code).glob("*.py"))
    assert files
    for path in files:
        found = [d.code for d in analyse(path.read_text(), str(path), all_rules()).diagnostics]
        assert code in found, path


def test_fixed_local_rank_argument_accepts_every_launcher(monkeypatch):
    source = (
        'import argparse\nimport torch.distributed\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=-1)\n'
        "device = lambda: parser.parse_args().local_rank\n"
    )
    fixed = fix_text(source, "train.py", [rule_by_code("DDP012")]).source
    assert fixed != source  # the file shows ranks (it imports torch.distributed), so the rule fixes it
    torch = types.ModuleType("torch")  # the import only, so the test runs without torch
    torch.distributed = types.ModuleType("torch.distributed")
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.distributed", torch.distributed)
    namespace = {}
    exec(compile(fixed, "train.py", "exec"), namespace)  # the example's own parser, not user code
    parser = namespace["parser"]
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert parser.parse_args([]).local_rank == -1
    assert parser.parse_args(["--local_rank=2"]).local_rank == 2
    assert parser.parse_args(["--local-rank=3"]).local_rank == 3
    monkeypatch.setenv("LOCAL_RANK", "5")
    exec(compile(fixed, "train.py", "exec"), namespace)
    assert namespace["parser"].parse_args([]).local_rank == 5


def test_collective_behind_a_rank_test_held_in_a_variable_is_ddp008():
    source = textwrap.dedent(
        """
        import torch.distributed as dist

        def log(rank, tensor):
            is_logger = rank == 0
            if is_logger:
                dist.all_reduce(tensor)
        """
    )
    assert [d.code for d in analyse(source, "x.py", [rule_by_code("DDP008")]).diagnostics] == ["DDP008"]


# -- predicates judged by their definition, and functions named without a call -----------


@pytest.mark.parametrize(
    "source, expected",
    [
        # same-module helpers whose body is a rank-0 test, whatever their name
        ("def should_save():\n    return dist.get_rank() == 0\nif should_save():\n    probe()", ["zero"]),
        ("def on_rank_zero():\n    return int(os.environ['RANK']) == 0\nif on_rank_zero():\n    probe()", ["zero"]),
        ("def is_main_worker():\n    return not dist.is_initialized() or dist.get_rank() == 0\nif is_main_worker():\n    probe()", ["zero"]),
        ("def is_leader():\n    if not dist.is_initialized():\n        return True\n    return get_rank() == 0\nif is_leader():\n    probe()\nelse:\n    probe()", ["zero", "others"]),
        ("def is_leader():\n    rank = dist.get_rank()\n    return rank == 0\ndef should_log():\n    return is_leader()\nif should_log():\n    probe()", ["zero"]),
        ("def primary():\n    return dist.get_rank() == 0 if dist.is_initialized() else True\nif primary():\n    probe()", ["zero"]),
        ("def f():\n    if not should_save():\n        return\n    probe()\ndef should_save():\n    return dist.get_rank() == 0", ["zero"]),
        ("class T:\n    def is_leader(self):\n        return self.rank == 0\n    def save(self):\n        if self.is_leader():\n            probe()", ["zero"]),
        ("class T:\n    @property\n    def is_leader(self):\n        return self.rank == 0\n    def save(self):\n        if self.is_leader:\n            probe()", ["zero"]),
        ("def is_dist_avail_and_initialized():\n    if not dist.is_available():\n        return False\n    if not dist.is_initialized():\n        return False\n    return True\nif not is_dist_avail_and_initialized():\n    probe()", ["none"]),
        # a guard's name on a body that tests no rank is no guard; a body that is not read
        # but mentions the rank leaves the name to decide
        ("def is_main_process():\n    return True\nif is_main_process():\n    probe()", ["all"]),
        ("def is_master():\n    return args.master_flag\nif is_master():\n    probe()", ["all"]),
        ("def should_save(epoch):\n    return epoch % 10 == 0\nif should_save(3):\n    probe()", ["all"]),
        ("def is_main_process():\n    try:\n        return dist.get_rank() == 0\n    except RuntimeError:\n        return True\nif is_main_process():\n    probe()", ["zero"]),
        ("def should_save():\n    try:\n        return dist.get_rank() == 0\n    except RuntimeError:\n        return True\nif should_save():\n    probe()", ["all"]),
        # a rank predicate named without a call is a function object: always true
        ("def is_main_process():\n    return dist.get_rank() == 0\nif is_main_process:\n    probe()\nelse:\n    probe()", ["all", "none"]),
        ("def should_save():\n    return dist.get_rank() == 0\nif should_save:\n    probe()", ["all"]),
        ("from utils import is_main_process\nif is_main_process:\n    probe()", ["all"]),
        ("import util.misc as utils\nif utils.is_main_process and epoch % 5 == 0:\n    probe()", ["all"]),
        ("import torch.distributed as dist\nif dist.is_initialized:\n    probe()\nelse:\n    probe()", ["all", "none"]),
        ("import torch.distributed as dist\nif not dist.is_initialized or dist.get_rank() == 0:\n    probe()", ["zero"]),
        ("class T:\n    def is_main(self):\n        return self.rank == 0\n    def save(self):\n        if self.is_main:\n            probe()", ["all"]),
        # values and properties that are read, not functions
        ("if accelerator.is_main_process:\n    probe()", ["zero"]),
        ("from train import master_process\nif master_process:\n    probe()", ["zero"]),
        ("def helper():\n    pass\nif helper:\n    probe()", ["all"]),
    ],
)
def test_predicates_by_definition_and_uncalled_functions(source, expected):
    assert regions(source)[0] == expected


_EVALUATE = """
import torch.distributed as dist

def evaluate(model):
    total = model.score()
    if not dist.is_initialized() or dist.get_rank() == 0:
        return total
{tail}
"""


@pytest.mark.parametrize(
    "tail, use, expected",
    [
        # a value only rank 0 gets back, None elsewhere: a test that it is there is a rank-0 test
        ("    return None", "measures = evaluate(model)\nif measures is not None:\n    probe()", ["zero"]),
        ("", "measures = evaluate(model)\nif measures is not None:\n    probe()", ["zero"]),
        ("    return", "if evaluate(model) is not None:\n    probe()", ["zero"]),
        ("    return None", "measures = evaluate(model)\nif measures is None:\n    probe()", ["others"]),
        ("    return None", "def f(model):\n    measures = evaluate(model)\n    if measures is None:\n        return\n    probe()", ["zero"]),
        ("    return None", "measures = evaluate(model)\nif measures:\n    probe()", ["zero"]),
        # not where the other ranks get a value too, even a false one, or the name holds another
        ("    return False", "measures = evaluate(model)\nif measures is not None:\n    probe()", ["all"]),
        ("    return {}", "measures = evaluate(model)\nif measures is not None:\n    probe()", ["all"]),
        ("    return None", "measures = evaluate(model)\nmeasures = load()\nif measures is not None:\n    probe()", ["all"]),
        ("    return None", "def f(measures):\n    if measures is not None:\n        probe()", ["all"]),
        # names bound from each other (transformers' testing_utils once recursed without end here)
        ("    return None", "measures = evaluate(model)\nbest = measures\nmeasures = best\nif measures is not None:\n    probe()", ["all"]),
        ("    return None", "measures = None\nfor step in steps:\n    measures = measures\nif measures is not None:\n    probe()", ["all"]),
    ],
)
def test_a_value_only_rank_zero_gets_back_guards_its_test(tail, use, expected):
    assert regions(_EVALUATE.format(tail=tail) + use)[0] == expected


def test_a_value_returned_under_no_rank_test_guards_nothing():
    source = "def evaluate(model, epoch):\n    if epoch > 3:\n        return model.score()\n    return None\n"
    assert regions(source + "measures = evaluate(model, 4)\nif measures is not None:\n    probe()")[0] == ["all"]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("return dist.get_rank() == 0", "ZERO"),
        ("return self.rank != 0", "NONZERO"),
        ("if rank == 0:\n        return True\n    return False", "ZERO"),
        ("if rank == 0:\n        log()\n    return True", "TRUE"),
        ("return flag", "UNKNOWN"),
        ("match x:\n        case 0:\n            return rank == 0", "UNKNOWN"),
    ],
)
def test_predicate_test_reads_returns_under_their_conditions(body, expected):
    from ddplint.analyses.ranks import NONZERO, ZERO, ALWAYS_TRUE, predicate_test

    function = cst.parse_module(f"def f(self):\n    {body}\n").body[0]
    assert predicate_test(function) == {"ZERO": ZERO, "NONZERO": NONZERO, "TRUE": ALWAYS_TRUE, "UNKNOWN": UNKNOWN}[expected]


_ACCELERATE_SAVES = """
import torch
import torch.distributed as dist
from accelerate import Accelerator

class Trainer:
    def __init__(self):
        self.accelerator = Accelerator()
        torch.save(self.model.state_dict(), "init.pt")

def helper(model):
    torch.save(model, "helper.pt")

def main():
    acc = Accelerator()
    torch.save(model, "main.pt")
    helper(model)

def plain():
    dist.init_process_group("nccl")
    torch.save(model, "plain.pt")
"""


def test_save_on_every_rank_suggests_the_rank_zero_test_of_the_files_framework():
    """DDP014 advises the guard of the launcher the save runs under: the Accelerator's own
    name, and for a helper that launches nothing the one of its class or of the functions; but
    `dist.get_rank()` where the file calls torch.distributed itself."""

    def guards(source: str) -> dict[int, str]:
        found = analyse(source, "train.py", [rule_by_code("DDP014")]).diagnostics
        return {d.line: d.message.partition("rank 0 only ")[2] for d in found}

    accelerate_only = _ACCELERATE_SAVES.replace("import torch.distributed as dist\n", "").partition("def plain")[0]
    assert guards(accelerate_only) == {
        8: "(if self.accelerator.is_main_process:)",
        11: "(if acc.is_main_process:)",
        15: "(if acc.is_main_process:)",
    }
    assert guards(_ACCELERATE_SAVES) == {
        9: "(if self.accelerator.is_main_process:)",
        12: "(if dist.get_rank() == 0:)",
        16: "(if acc.is_main_process:)",
        21: "(if dist.get_rank() == 0:)",
    }


# -- model parallelism and ranks held by names or helpers ------------------------------------

from ddplint.analyses.ranks import (  # noqa: E402
    DATA, GLOBAL, MODEL, RankValue, rank_dimension, rank_mentions, returned_rank,
)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("dist.get_rank()", GLOBAL),
        ("rank()", GLOBAL),
        ("args.local_rank % 8", GLOBAL),
        ("mpu.get_data_parallel_rank()", DATA),
        ("dp_rank", DATA),
        ("args.replica_id", DATA),
        ("mpu.get_tensor_model_parallel_rank()", MODEL),
        ("get_pipeline_model_parallel_rank()", MODEL),
        ("pp_rank", MODEL),
        ("args.mp_rank", MODEL),
        ("data_and_model_rank", None),  # words of both dimensions: unknown
        ("epoch", None),
    ],
)
def test_rank_dimensions(source, expected):
    assert rank_dimension(cst.parse_expression(source)) == expected


@pytest.mark.parametrize(
    "source",
    [
        "mpu.get_data_parallel_rank() == 0",
        "dp_rank == 0",
        "is_main_replica(args.replica_id)",
        "not dist.is_initialized() or mpu.get_data_parallel_rank() == 0",
    ],
)
def test_first_replica_tests_are_no_rank_zero_tests(source):
    """A data-parallel rank 0 is one process per part of the model: the first replica, which a
    save needs, not rank 0, which a collective needs."""
    test = guard(source)
    assert test.true_first_replica
    assert not test.true_only_zero


@pytest.mark.parametrize(
    "source",
    ["mpu.get_tensor_model_parallel_rank() == 0", "pp_rank == 0", "mpu.is_pipeline_last_stage()"],
)
def test_tensor_and_pipeline_rank_tests_tell_no_replica_apart(source):
    test = guard(source)
    assert not test.true_first_replica and not test.true_only_zero


def test_every_rank_zero_test_is_a_first_replica_test():
    assert guard("dist.get_rank() == 0").true_first_replica
    assert guard("dist.get_rank() != 0").false_first_replica


def test_a_rank_held_by_a_name_makes_a_test_when_compared():
    held = {"r": RankValue(GLOBAL), "dp": RankValue(DATA)}

    def resolve(expr):
        return held.get(getattr(expr, "value", None))

    assert classify(cst.parse_expression("r == 0"), resolve).true_only_zero
    assert classify(cst.parse_expression("r"), resolve) == NONZERO
    dp = classify(cst.parse_expression("dp == 0"), resolve)
    assert dp.true_first_replica and not dp.true_only_zero


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def rank():\n    return dist.get_rank() if initialized() else 0", RankValue(GLOBAL)),
        ("def rank():\n    if not dist.is_initialized():\n        return 0\n    return dist.get_rank()", RankValue(GLOBAL)),
        ("def dp():\n    return mpu.get_data_parallel_rank()", RankValue(DATA)),
        ("def rank():\n    return dist.get_rank() or -1\n", None),
        ("def rank():\n    return", None),
        ("def mixed(x):\n    return dp_rank if x else tp_rank", None),
    ],
)
def test_functions_that_return_a_rank(source, expected):
    function = cst.parse_module(source).body[0]
    assert returned_rank(function) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ('f"ckpt_{rank}.pt"', {GLOBAL}),
        ('f"model_pp{mpu.get_pipeline_model_parallel_rank()}.pt"', {MODEL}),
        ('os.path.join(out, f"mp_rank_{tp:02d}", f"dp{dp_rank}")', {DATA}),
        ('f"best_{args.node_rank}.pt"', {GLOBAL}),  # a rank of no known dimension
        ('os.path.join(out, "last.pt")', set()),
    ],
)
def test_rank_mentions_of_file_names(source, expected):
    assert rank_mentions(cst.parse_expression(source)) == expected
