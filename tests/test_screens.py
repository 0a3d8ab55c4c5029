"""The ast screens: what each kind holds on, how call targets resolve through imports, and
how the engine uses them (a file no screen admits is never parsed by libcst)."""

import pytest

from ddplint.engine import lint as engine
from ddplint.rules import all_rules, rule_by_code
from ddplint.prefilter.screens import CallInDefault, Calls, Mentions, Subclasses, UnreadSelfAttribute, facts_of

LOAD = Calls(targets=("torch.load", "torch.serialization.load"), without_keyword="map_location")


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntorch.load(p)\n",
        "import torch as th\nth.load(p)\n",
        "from torch import load\nload(p)\n",
        "from torch import load as restore\nrestore(p)\n",
        "import torch.serialization as s\ns.load(p, weights_only=True)\n",
        "def f():\n    import torch\n    return torch.load(p)\n",  # imports anywhere count
        "import torch\ntorch = None\ntorch.load(p)\n",  # shadowing is ignored: may hold more
    ],
)
def test_calls_resolve_targets_through_every_import_form(source):
    assert LOAD.holds(facts_of(source))


@pytest.mark.parametrize(
    "source",
    [
        "import torch\n# torch.load(p)\ntext = 'torch.load(p)'\n",  # text only: the needle's case
        "import torch\ntorch.load(p, map_location='cpu')\n",
        "import pickle\npickle.load(f)\n",
        "from .torch import load\nload(p)\n",  # a relative import is another module
        "torch.load(p)\n",  # torch never imported: the rules cannot resolve it either
    ],
)
def test_calls_does_not_hold_without_such_a_call(source):
    assert not LOAD.holds(facts_of(source))


def test_calls_lambda_first_and_methods():
    factory = Calls(targets=("collections.defaultdict",), lambda_first=True)
    assert factory.holds(facts_of("from collections import defaultdict as dd\nd = dd(lambda: 0)\n"))
    assert not factory.holds(facts_of("import collections\nd = collections.defaultdict(int)\nf = lambda: 0\n"))
    process = Calls(methods=("Process",))
    assert process.holds(facts_of("ctx.Process(target=f)\n"))
    assert not process.holds(facts_of("Process(target=f)\n"))  # a bare name is not a method


SHIPPED = rule_by_code("DDP016").screen


@pytest.mark.parametrize(
    ("source", "holds"),
    [
        ("from torch.utils.data import DataLoader\nDataLoader(d, num_workers=2, collate_fn=lambda b: b)\n", True),
        ("from torch.utils.data import DataLoader\ndef main(d):\n    def c(b):\n        return b\n"
         "    return DataLoader(d, num_workers=2, collate_fn=c)\n", True),
        ("import functools\nfrom torch.utils.data import DataLoader\nfix = lambda b, k: b\n"
         "DataLoader(d, num_workers=2, worker_init_fn=functools.partial(fix, k=1))\n", True),
        ("import torch.multiprocessing as mp\ndef main():\n    def run(rank):\n        pass\n    mp.spawn(run, nprocs=2)\n", True),
        # A module-level def of the same name as a nested one: either may be meant.
        ("from torch.utils.data import DataLoader\ndef c(b):\n    return b\nclass A:\n    def c(self, b):\n        return b\n"
         "DataLoader(d, num_workers=2, collate_fn=c)\n", True),
        ("from torch.utils.data import DataLoader\ndef c(b):\n    return b\nDataLoader(d, num_workers=2, collate_fn=c)\n", False),
        # a callable a call makes, passed directly or through a name: a project factory may return a closure
        ("from torch.utils.data import DataLoader\nDataLoader(d, num_workers=2, collate_fn=get_collate(keys))\n", True),
        ("from torch.utils.data import DataLoader\nc = get_collate(keys)\nDataLoader(d, num_workers=2, collate_fn=c)\n", True),
        ("from torch.utils.data import DataLoader\nDataLoader(d, num_workers=2, collate_fn=partial(stack, 1))\n", False),
        ("from torch.utils.data import DataLoader\nclass T:\n    def load(self, d):\n"
         "        return DataLoader(d, num_workers=2, collate_fn=self.collate)\n", False),
        ("from torch.utils.data import DataLoader\ndef load(d, collate_fn):\n"
         "    return DataLoader(d, num_workers=2, collate_fn=collate_fn)\n", False),
    ],
)
def test_calls_shipped_holds_only_where_the_callable_may_be_local(source, holds):
    assert SHIPPED.holds(facts_of(source)) is holds


SAVE_IN_DISTRIBUTED_CODE = rule_by_code("DDP014").screen


@pytest.mark.parametrize(
    "evidence, holds",
    [
        ("import torch.distributed as dist\nif dist.get_rank() == 0:\n    pass\n", True),
        ("from torch import distributed\ndistributed.barrier()\n", True),
        ("from torch.nn.parallel import DistributedDataParallel as DDP\nnet = DDP(net)\n", True),
        ("import torch.multiprocessing as mp\nmp.spawn(main, nprocs=2)\n", True),
        ("import os\nrank = int(os.environ['LOCAL_RANK'])\n", True),
        ("from accelerate import Accelerator\nacc = Accelerator()\n", True),
        ("fabric.launch()\n", True),
        ("import lightning as L\nclass Net(L.LightningModule):\n    pass\n", True),
        # Text the needles admit, but no code of ranks: a docstring, an import alone, a flag.
        ('"""Works in distributed training (DistributedDataParallel)."""\n', False),
        ("import torch.distributed as dist\n", False),
        ("from torch.distributed.checkpoint import save as dcp_save\ndcp_save(state)\n", False),
        ("if args.distributed:\n    pass\n", False),
    ],
)
def test_ddp014_screens_for_a_save_in_code_that_shows_ranks_run_it(evidence, holds):
    source = f"import torch\n{evidence}def keep(net):\n    torch.save(net.state_dict(), 'net.pt')\n"
    assert SAVE_IN_DISTRIBUTED_CODE.holds(facts_of(source)) is holds
    # Without a save there is nothing for the rule to report, whatever the evidence.
    assert not SAVE_IN_DISTRIBUTED_CODE.holds(facts_of(evidence))


LOAD_IN_DISTRIBUTED_CODE = rule_by_code("DDP004").screen


@pytest.mark.parametrize(
    "evidence, holds",
    [
        # The wider evidence DDP004 reads: an import alone, any name under torch.distributed.
        ("import torch.distributed\n", True),
        ("from torch.nn.parallel import DistributedDataParallel\n", True),
        ("from torch.distributed.checkpoint import load as dcp_load\ndcp_load(state)\n", True),
        ("sampler = torch.utils.data.DistributedSampler(data)\n", True),
        ("import os\nrank = os.environ.get('RANK')\n", True),
        ('"""Loads a checkpoint saved by distributed training."""\n', False),
        ("if cfg.distributed:\n    pass\n", False),
    ],
)
def test_ddp004_screens_for_a_load_in_a_file_with_distributed_code(evidence, holds):
    source = f"import torch\n{evidence}def restore(path):\n    return torch.load(path)\n"
    assert LOAD_IN_DISTRIBUTED_CODE.holds(facts_of(source)) is holds
    # Strict, the rule flags every such load: its screen asks for the load alone.
    assert rule_by_code("DDP004").strict_variant().screen.holds(facts_of(source))


RANK_ZERO_COLLECTIVE = rule_by_code("DDP008").screen

_DIST = "import torch.distributed as dist\n"


@pytest.mark.parametrize(
    "source, holds",
    [
        (_DIST + "def f(rank):\n    if rank == 0:\n        dist.barrier()\n", True),
        (_DIST + "def f(args):\n    if args.local_rank != 0:\n        return\n    dist.all_reduce(t)\n", True),
        (_DIST + "def f(rank):\n    if rank == 0:\n        sync()\n\ndef sync():\n    dist.barrier()\n", True),
        (_DIST + "def f():\n    if is_main_process():\n        dist.barrier()\n", True),
        # A test held in a variable or returned by a function of the file, at any depth.
        (_DIST + "def f(rank):\n    verbose = rank == 0\n    if verbose:\n        dist.barrier()\n", True),
        (_DIST + "def leader():\n    return dist.get_rank() == 0\n\ndef lead():\n    return leader()\n\n"
         "def f():\n    if lead():\n        dist.barrier()\n", True),
        (_DIST + "@rank_zero_only\ndef f():\n    dist.barrier()\n", True),
        # No test that can tell rank 0 from the others around the collective.
        (_DIST + "def f(rank):\n    dist.barrier()\n    if rank == 0:\n        print('done')\n", False),
        (_DIST + "def f(x):\n    if dist.is_initialized() and x:\n        dist.all_reduce(x)\n", False),
        (_DIST + "def f(tp_rank_size):\n    if tp_rank_size > 1:\n        dist.all_reduce(t)\n", False),
        (_DIST + "def f(rank):\n    x = dist.get_rank()\n    if x == 0:\n        dist.barrier()\n", False),
        # Placed by lines, a call in a def nested in the branch counts too: it can only admit more.
        (_DIST + "def f(rank):\n    if rank == 0:\n        def later():\n            dist.barrier()\n", True),
        # A predicate imported from the project, or a flag a project base class may set: read
        # in other modules, so the screen cannot rule them out.
        (_DIST + "from .utils import should_log\ndef f():\n    if should_log():\n        dist.barrier()\n", True),
        (_DIST + "from .base import Trainer\nclass T(Trainer):\n    def f(self):\n        if self.leader:\n"
         "            dist.barrier()\n", True),
        (_DIST + "from torch import nn\nclass T(nn.Module):\n    def f(self):\n        if self.leader:\n"
         "            dist.barrier()\n", False),
        # Only an attribute of what methods call their instance: `args.flag` is no base class's.
        (_DIST + "from .base import Trainer\nclass T(Trainer):\n    def f(this, args):\n        if args.leader:\n"
         "            dist.barrier()\n", False),
        (_DIST + "from .base import Trainer\nclass T(Trainer):\n    def f(this, args):\n        if this.leader:\n"
         "            dist.barrier()\n", True),
    ],
)
def test_ddp008_screens_for_a_collective_that_rank_0_alone_may_reach(source, holds):
    assert RANK_ZERO_COLLECTIVE.holds(facts_of(source)) is holds


def test_ddp008_screen_takes_the_project_packages_from_the_hints():
    source = _DIST + "from pkg.utils import should_log\ndef f():\n    if should_log():\n        dist.barrier()\n"
    facts = facts_of(source)
    assert not RANK_ZERO_COLLECTIVE.holds(facts)  # a library's function: its body is not read
    facts.project_packages = frozenset({"pkg"})
    assert RANK_ZERO_COLLECTIVE.holds(facts)


def test_ddp008_still_sees_a_predicate_of_another_module_through_the_screen(tmp_path):
    from ddplint.api import lint_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(_DIST + "def leader_rank_check():\n    return dist.get_rank() == 0\n")
    (tmp_path / "pkg" / "train.py").write_text(
        _DIST + "from pkg.utils import leader_rank_check\n\ndef report(t):\n    if leader_rank_check():\n"
        "        dist.all_reduce(t)\n"
    )
    found = [(r.path.rpartition("pkg")[2], d.line, d.code) for r in lint_paths([str(tmp_path)]) for d in r.diagnostics]
    assert found == [("/train.py", 6, "DDP008")]


def test_subclasses_and_mentions():
    sampler = Subclasses(targets=("torch.utils.data.DistributedSampler",))
    assert sampler.holds(facts_of("from torch.utils.data import DistributedSampler as DS\nclass S(DS): pass\n"))
    assert not sampler.holds(facts_of("from torch.utils.data import DistributedSampler\nclass S(object): pass\n"))
    variable = Mentions(names=("CUDA_VISIBLE_DEVICES",))
    assert variable.holds(facts_of("import os\nos.environ['CUDA_' 'VISIBLE_DEVICES'] = '0'\n"))
    assert variable.holds(facts_of("import os\nos.environ.update(CUDA_VISIBLE_DEVICES='0')\n"))
    assert not variable.holds(facts_of("import os\n# CUDA_VISIBLE_DEVICES\nos.environ['X'] = '0'\n"))


@pytest.mark.parametrize(
    "source, holds",
    [
        ("def f(x=torch.zeros(1).cuda()): pass\n", True),
        ("def helper(): pass\ndef f(x=helper()): pass\n", True),  # a same-module helper may move to CUDA
        ("from x import helper\ndef f(x=helper()): pass\n", False),  # the rule follows no imported helper
        ("from torch.cuda import FloatTensor as FT\ndef f(x=FT([1.0])): pass\n", True),
        ("def f(x=th.ones(1, device=d)): pass\n", True),
        ("def f(*, x=torch.cuda.FloatTensor([1.0])): pass\n", True),
        ("g = lambda x=t.to(d): x\n", True),
        ("def f(x=None, y='cuda', z=torch.device('cuda'), n=3): pass\n", False),
        ("def f(x=np.zeros(3)): pass\n", False),
    ],
)
def test_call_in_default(source, holds):
    screen = CallInDefault(methods=("cuda", "to"), keywords=("device",), suffixes=("Tensor",))
    assert screen.holds(facts_of(source)) is holds


LAYER = "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x): return x\n"


@pytest.mark.parametrize(
    "source, holds",
    [
        (LAYER + "    def __init__(self):\n        self.fc = nn.Linear(1, 1)\n", True),
        (LAYER + "    def __init__(me):\n        me.fc = nn.Linear(1, 1)\n    def f(me, x):\n        return me.fc(x)\n", False),
        # read in a nested function of a method: still the method's self
        (LAYER + "    def __init__(self):\n        self.fc = nn.Linear(1, 1)\n    def f(self):\n        return lambda: self.fc\n", False),
        # read only by a nested class's own `self`: not a read of M's attribute
        (
            LAYER + "    def __init__(self):\n        self.fc = nn.Linear(1, 1)\n"
            "    def f(self):\n        class N:\n            def g(self):\n                return self.fc\n",
            True,
        ),
        (LAYER + "    def __init__(self):\n        self.block = M()\n", True),  # a class of this file
        (LAYER + "    def __init__(self):\n        self.act = nn.ReLU()\n", False),  # no parameters
        (LAYER + "    def __init__(self):\n        self.lock = threading.Lock()\n", False),
        (LAYER.replace("forward", "run") + "    def __init__(self):\n        self.fc = nn.Linear(1, 1)\n", False),
    ],
)
def test_unread_self_attribute(source, holds):
    screen = rule_by_code("DDP015").screen
    assert isinstance(screen, UnreadSelfAttribute)
    assert screen.holds(facts_of(source)) is holds


def test_code_this_python_cannot_parse_gets_no_screen():
    assert facts_of("def f(:\n") is None
    source = "import torch.distributed\nx = torch.load(ckpt)\ndef f[T](x: T) -> T: return x\n"  # 3.12 syntax
    try:
        compile(source, "x.py", "exec")
    except SyntaxError:
        assert facts_of(source) is None
        assert [rule.code for rule in engine.rules_to_run(source, all_rules())] == ["DDP004"]


def test_invalid_escape_sequences_do_not_warn(recwarn):
    assert facts_of("x = '\\d'\n") is not None
    assert not recwarn.list


def test_file_whose_ast_has_no_rule_construct_is_never_parsed(monkeypatch):
    def refuse(source):
        raise AssertionError("libcst parsed a file no screen admits")

    monkeypatch.setattr(engine, "parse", refuse)
    source = "import torch.distributed\nfrom collections import defaultdict\nstate = torch.load(p, map_location='cpu')\n"
    assert [rule.code for rule in engine.rules_for_text(source, all_rules())] == ["DDP004"]
    assert engine.analyse(source, "x.py", all_rules()).diagnostics == []
