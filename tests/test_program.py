"""The program model (ddplint/model/program.py): DDP models, objects and loaders followed across
functions and modules; what it cannot see (a module that does not parse, circular and star
imports, importlib, exec) leaves it answering "unknown", never crashing or inventing a value."""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.model import project
from ddplint.model import inner
from ddplint.model.program import Collective, Evaluation
from ddplint.model.records import CallResult, Inner, Instance, Item, Loader, Pack, Param, Place, Prepared, Wrapped
from ddplint.model.summary import summarize
from ddplint.model.values import Part, Step, Wrap, WrapperSave
from ddplint.rules.ddp002_lambda_default_factory import Fate, Fates
from ddplint.rules.ddp004_torch_load_without_map_location import on_host, own_record, saved_files
from ddplint.rules.ddp009_ddp_state_dict_prefix import saved_from_wrapper
from ddplint.rules.ddp014_save_on_every_rank import distributed_branch_besides, saving_helper


def P(text: str) -> Place:
    """The Place "pkg/main.py:5" names."""
    path, _, line = text.rpartition(":")
    return Place(path, int(line))

_WRAP = "from torch.nn.parallel import DistributedDataParallel as DDP\n"


def saved_on_host(index, module: str, path: str) -> Place | None:
    """Where the program `module` is part of saves the file `path` with no CUDA tensors (DDP004)."""
    return on_host(saved_files(index.module_view(module), path))


def _project(tmp_path, modules: dict[str, str]):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for name, text in modules.items():
        (tmp_path / "pkg" / f"{name}.py").write_text(text)
    return project.build(str(tmp_path))


def test_a_parameter_a_helper_is_handed_is_a_ddp_model_with_the_place_that_makes_it_so(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.engine import train\n\ndef main(net):\n    model = DDP(net)\n    train(model, 4)\n",
        "engine": "def train(model, steps):\n    step(model)\n\ndef step(net):\n    return net\n",
    })
    program = index.program
    assert program.parameters[("pkg.engine", "train")]["model"] == Wrapped(P("pkg/main.py:5"), P("pkg/main.py:6"))
    # handed on: the origin stays the wrap, the call is the one that hands it on
    assert program.parameters[("pkg.engine", "step")]["net"] == Wrapped(P("pkg/main.py:5"), P("pkg/engine.py:2"))
    assert ("pkg.engine", "step") in program.results


def test_what_a_ddp_model_wraps_is_known_when_the_class_reaches_the_wrapping_helper_late(tmp_path):
    # "base" is read first: model_to_device returns its DDP model before the program has read
    # that "model" hands it a Net; the value it returns (and the attribute) learns it later.
    index = _project(tmp_path, {
        "base": _WRAP + "class Base:\n    def model_to_device(self, net):\n        net = net.cuda()\n"
        "        return DDP(net)\n",
        "model": "from pkg.base import Base\nfrom pkg.net import Net\n\nclass SR(Base):\n"
        "    def __init__(self):\n        self.net_g = self.model_to_device(Net())\n",
        "net": "class Net:\n    pass\n",
    })
    wrapped = Wrapped(P("pkg/base.py:5"), wraps=("pkg.net", "Net"))
    assert index.program.results[("pkg.base", "Base.model_to_device")] == wrapped
    assert index.program.attributes[("pkg.model", "SR")]["net_g"] == wrapped


def test_the_inner_model_and_other_values_are_not_ddp_models(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.engine import train\n\ndef main(net, args):\n    model = DDP(net)\n"
        "    train(model.module, 1)\n    train(args.model, 2)\n    model = net\n    train(model, 3)\n",
        "engine": "def train(model, steps):\n    pass\n",
    })
    assert index.program.held(index.program.parameters, ("pkg.engine", "train"), Wrapped) == {}


def test_the_inner_module_is_a_value_of_its_own_and_the_helpers_that_train_it_are_found(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg import engine\n\ndef main(net, args):\n    model = DDP(net)\n"
        "    inner = model.module if args.distributed else model\n    engine.train(inner, 1)\n"
        "    unwrapped = getattr(model, 'module', model)\n    engine.evaluate(unwrapped)\n    engine.train(net, 2)\n"
        "    engine.Trainer(model.module).fit()\n",
        "engine": "import torch\n\ndef train(model, steps):\n    step(model)\n\n"
        "def step(net):\n    net(1).backward()\n\n"
        "@torch.no_grad()\ndef evaluate(model):\n    model(1).sum().backward()\n\n"
        "class Trainer:\n    def __init__(self, model):\n        self.model = model\n"
        "    def fit(self):\n        with torch.no_grad():\n            self.model(1)\n"
        "        torch.ones(1).backward()\n",
    })
    program = index.program
    assert program.parameters[("pkg.engine", "train")]["model"] == Inner(P("pkg/main.py:5"), P("pkg/main.py:7"))
    assert program.parameters[("pkg.engine", "step")]["net"] == Inner(P("pkg/main.py:5"), P("pkg/engine.py:4"))
    assert program.held(program.parameters, ("pkg.engine", "train"), Wrapped) == {}  # not a DDP model
    # Only `inner` reaches a forward and a backward: evaluate() and fit() call it under no_grad.
    assert inner.handed(program, "pkg.main") == {
        ("main", "engine.train", 0, "inner"): inner.Trained(Inner(P("pkg/main.py:5")), "step", P("pkg/engine.py:7")),
    }
    assert inner.handed(program, "pkg.engine") == {}  # handed on as a parameter: its caller is reported


def test_objects_of_project_classes_reach_their_methods(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.scaler import Scaler\nfrom pkg.engine import train\n\n"
        "def main(net):\n    train(DDP(net), Scaler())\n",
        "scaler": "class Scaler:\n    def __call__(self, loss, optimizer, update=True):\n        loss.backward()\n"
        "        if update:\n            optimizer.step()\n",
        "engine": "def train(model, scaler):\n    scaler(model(1), None)\n",
    })
    program = index.program
    assert isinstance(program.parameters[("pkg.engine", "train")]["scaler"], Instance)
    helper = program.callee_summary("pkg.engine", "train", None, "scaler")
    assert helper.summary.backward and helper.summary.gates == ("update",) and helper.bound


def test_a_collective_reached_through_helpers_names_its_place(tmp_path):
    index = _project(tmp_path, {
        "metrics": "import torch.distributed as dist\n\nclass Meter:\n    def sync(self):\n        dist.all_reduce(self.t)\n",
        "main": "import torch.distributed as dist\nfrom pkg import metrics\n\n"
        "def evaluate(loader):\n    meter = metrics.Meter()\n    for x in loader:\n        pass\n    meter.sync()\n",
    })
    program = index.program
    assert program.combines("pkg.main", "evaluate", None, "metrics.Meter().sync") == Collective("all_reduce", P("pkg/metrics.py:5"))
    assert program.combines("pkg.metrics", "Meter.sync", "Meter", "dist.all_reduce") == Collective("all_reduce")  # the call itself
    assert program.combines("pkg.main", "evaluate", None, "print") is None


_PIECES = [
    "import pkg.{other} as other\n",
    "from pkg.{other} import *\n",
    "from pkg.{other} import helper, Trainer\n",
    "if flag:\n    from pkg.{other} import helper\nelse:\n    from pkg.{other} import *\n",
    "try:\n    from pkg.{other} import Trainer, build\nexcept ImportError:\n    import pkg.{other} as other\n",
    "import importlib\nother = importlib.import_module('pkg.{other}')\n",
    "other = __import__('pkg.{other}')\n",
    "exec('model = DDP(net)')\n",
    _WRAP,
    "def helper(model, loader):\n    for x in loader:\n        model(x).backward()\n    return model\n",
    "def main(net, loader):\n    model = DDP(net)\n    helper(model, loader)\n    other.helper(model, loader)\n",
    "def unwrap(net, loader):\n    inner = DDP(net).module\n    other.helper(inner, loader)\n"
    "    return Trainer(inner)\n",
    "class Trainer:\n    def __init__(self, model):\n        self.model = model\n    def fit(self, x):\n        return self.model(x)\n",
    "def build(net):\n    return Trainer(DDP(net))\n",
    "def loop(model):\n    return loop(model)\n",
    "def broken(:\n",
    "x = (\n",
    "model = helper(build(1), [])\n",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6), min_size=1, max_size=4))
def test_random_projects_of_these_pieces_never_crash_the_model_or_a_lint(tmp_path_factory, layout):
    from ddplint.engine.lint import SourceError, analyse
    from ddplint.rules import all_rules

    root = tmp_path_factory.mktemp("project")
    names = [f"m{i}" for i in range(len(layout))]
    texts = {
        name: "".join(piece.format(other=names[(i + 1) % len(names)]) for piece in pieces)
        for i, (name, pieces) in enumerate(zip(names, layout))
    }
    index = _project(root, texts)
    program = index.program
    for (module, key), values in program.parameters.items():  # every answer names a module it read
        assert module in index.modules and program.summary(module) is not None
        assert all(isinstance(v, (Wrapped, Inner, Instance)) for v in values.values())
    for name, text in texts.items():
        view = index.view(str(root / "pkg" / f"{name}.py"))
        view.hints()
        view.inner_handed()
        try:
            analyse(text, str(root / "pkg" / f"{name}.py"), all_rules(), project=view)
        except SourceError:
            pass  # a module that does not parse is reported as such, and the others still run


def test_summaries_of_odd_code_are_typed_records():
    tree = ast.parse(
        "class A(B.C, metaclass=M):\n    async def f(self, *a, x, **k):\n        async with g() as (p, q):\n"
        "            self.y: int = h(x)\n        return [self.y]\n    @staticmethod\n    def s(z):\n        match z:\n"
        "            case 1:\n                return z\n"
    )
    summary = summarize(tree)
    assert summary.classes["A"].bases == ("B.C",)
    assert summary.functions["A.f"].sets == {"y": CallResult("h", 4)}
    assert not summary.functions["A.s"].method


def test_placement_follows_cpu_models_wrap_helpers_and_process_groups_and_knows_when_it_cannot(tmp_path):
    from ddplint.rules import ddp020_wrapper_order as placement
    from ddplint.rules import ddp023_missing_device_binding as binding

    index = _project(tmp_path, {
        "main": "from pkg import models, parallel, utils, broken\n",
        "models": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n\n"
        "class OnGpu(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.cuda()\n\n"
        "def build(cfg):\n    model = Net()\n    return model\n\n"
        "def built_and_moved(cfg):\n    model = Net()\n    model.cuda()\n    return model\n\n"
        "def either(cfg):\n    if cfg.small:\n        return nn.Linear(2, 2)\n    return load(cfg)\n",
        "parallel": _WRAP + "def wrap(module, rank):\n    return DDP(module, device_ids=[rank])\n\n"
        "def wrap_moved(module, rank):\n    module.to(rank)\n    return DDP(module, device_ids=[rank])\n",
        "utils": "import torch.distributed as dist\n\ndef init(args):\n    dist.init_process_group('nccl')\n\n"
        "def init_gloo(args):\n    dist.init_process_group('gloo')\n",
        "broken": "def init(args):\n    dist.init_process_group('nccl'\n",
    })
    program = index.program

    def constructor(name):
        return name.startswith("torch.nn.")

    assert placement.cpu_built(program, "pkg.main", "models.build", None, constructor) == P("pkg/models.py:12")
    assert placement.cpu_built(program, "pkg.main", "models.Net", None, constructor) is placement.HERE
    assert placement.cpu_built(program, "pkg.main", "models.OnGpu", None, constructor) is None
    assert placement.cpu_built(program, "pkg.main", "models.built_and_moved", None, constructor) is None
    assert placement.cpu_built(program, "pkg.main", "models.either", None, constructor) is None  # one return is unknown
    assert placement.handed_to_ddp(program, "pkg.main", None, None, "parallel.wrap", 0) == P("pkg/parallel.py:3")
    assert placement.handed_to_ddp(program, "pkg.main", None, None, "parallel.wrap", 1) is None
    assert placement.handed_to_ddp(program, "pkg.main", None, None, "parallel.wrap_moved", 0) is None
    assert binding.nccl_group(program, "pkg.main", None, None, "utils.init") == P("pkg/utils.py:4")
    assert binding.nccl_group(program, "pkg.main", None, None, "utils.init_gloo") is None
    assert binding.nccl_group(program, "pkg.main", None, None, "broken.init") is None  # does not parse: unknown
    assert not binding.binds_device(program, "pkg.main", None, None, "utils.init")


def test_cuda_placement_is_followed_through_helpers_across_modules_and_recursion(tmp_path):
    from ddplint.rules import ddp001_cuda_tensor_in_default_argument as placement

    index = _project(tmp_path, {
        "utils": "import torch\n\ndef to_gpu(x):\n    return x.cuda(non_blocking=True)\n\n"
        "def table(n):\n    return torch.zeros(n, device=torch.device('cuda', 1))\n\n"
        "def by_index(x):\n    return x.to(0)\n\n"
        "def legacy(n):\n    return torch.cuda.FloatTensor(n)\n\n"
        "def on_cpu(x):\n    'not x.cuda()'\n    return x.to('cpu'), torch.device(0), x.to(device='cpu')\n",
        "helpers": "# cuda helpers\nfrom pkg import utils\nfrom pkg.utils import to_gpu as put\n\n"
        "def place(x):\n    return prepare(put(x))\n\n"
        "def prepare(x):\n    return place(x) if x is None else x\n\n"
        "def spin(x):\n    return spin(utils.on_cpu(x))\n",
    })
    program = index.program
    assert placement.cuda_placement(program, "pkg.utils", "to_gpu") == P("pkg/utils.py:4")
    assert placement.cuda_placement(program, "pkg.utils", "table") == P("pkg/utils.py:7")
    assert placement.cuda_placement(program, "pkg.utils", "by_index") == P("pkg/utils.py:10")
    assert placement.cuda_placement(program, "pkg.utils", "legacy") == P("pkg/utils.py:13")
    assert placement.cuda_placement(program, "pkg.utils", "on_cpu") is None
    # through a renamed import, and through a helper that calls back into the first
    assert placement.cuda_placement(program, "pkg.helpers", "prepare") == P("pkg/utils.py:4")
    assert placement.cuda_placement(program, "pkg.helpers", "spin") is None  # the recursion ends
    view = index.module_view("pkg.helpers")
    assert placement.cuda_function(view, "pkg.helpers.place") == P("pkg/helpers.py:5")
    # the text says "x.cuda()" (in a string): the index admits it, the program does not
    assert view.may_use_cuda("pkg.utils.on_cpu") and placement.cuda_function(view, "pkg.utils.on_cpu") is None


def test_who_runs_a_function_is_answered_across_modules(tmp_path):
    """ddplint/model/context.py: a predicate helper is judged by its body at any depth, never by
    its name; a function runs on rank 0 only when every call in the project is made where only
    rank 0 gets (a guard, an early return on the other ranks, a caller only rank 0 runs); a
    module that may call it and is not read leaves that unknown."""
    index = _project(tmp_path, {
        "dist": "import torch.distributed as dist\n\ndef get_rank():\n    if not dist.is_initialized():\n"
                "        return 0\n    return dist.get_rank()\n\ndef is_leader():\n    return get_rank() == 0\n\n"
                "def should_write():\n    return is_leader()\n\ndef is_master(args):\n    return args.save\n",
        "ckpt": "import torch\n\ndef save(state):\n    torch.save(state, 'a.pt')\n\ndef write(state):\n    save(state)\n\n"
                "def dump(state):\n    torch.save(state, 'b.pt')\n",
        "train": "from pkg import dist\nfrom pkg.ckpt import write, dump\n\ndef main(state, rank):\n"
                 "    if dist.should_write():\n        write(state)\n    dump(state)\n\ndef end(state, rank):\n"
                 "    if rank != 0:\n        return\n    dump(state)\n",
    })
    context = index.program.context
    assert context.predicate("pkg.train", "dist.should_write").true_only_zero
    assert not context.predicate("pkg.train", "dist.is_master").is_rank_test  # named like a guard, tests no rank
    assert context.predicate("pkg.train", "len") is None  # not a project function: its name decides
    assert context.only_rank_zero("pkg.ckpt", "write") and context.only_rank_zero("pkg.ckpt", "save")
    assert not context.only_rank_zero("pkg.ckpt", "dump")  # main() calls it on every rank
    assert context.called_elsewhere_only_on_rank_zero("pkg.ckpt", "write") is True
    assert context.called_elsewhere_only_on_rank_zero("pkg.ckpt", "save") is None  # only its own module calls it
    index.program._summaries["pkg.train"] = None  # a caller that does not parse: unknown
    context._callers.clear()
    assert context.call_sites("pkg.ckpt", "dump") is None
    assert context.call_sites("pkg.ckpt", "dump", read_only=True) == []  # the calls read: none
    assert context.called_elsewhere_only_on_rank_zero("pkg.ckpt", "dump") is None


def test_the_branch_beside_one_that_only_a_distributed_run_takes_is_not_every_ranks(tmp_path):
    sampler = "        sampler = torch.utils.data.distributed.DistributedSampler(ds)\n"
    index = _project(tmp_path, {
        "loaders": "import torch.utils.data.distributed\nfrom torch.utils.data import DataLoader\n"
                   "from pkg.data import Cached\n\n"
                   "def make(args, ds):\n    if args.dist:\n" + sampler + "    else:\n        ds = Cached(args.root)\n\n"
                   "def early(args, ds):\n    if not args.dist:\n        return Cached(args.root)\n" + sampler[4:] + "\n"
                   "def plain(args, ds):\n    if args.cache:\n        ds = Cached(args.root)\n    else:\n        ds = None\n\n"
                   "def named(args, ds):\n    if args.name == 'coco':\n" + sampler + "    else:\n        ds = Cached(args.root)\n\n"
                   "def both(args, ds):\n    if args.dist:\n        ds = Cached(torch.utils.data.distributed.DistributedSampler(ds))\n"
                   "    else:\n" + sampler,
        "data": "class Cached:\n    def __init__(self, root):\n        self.root = root\n",
    })
    program = index.program

    def beside(key, line):
        return distributed_branch_besides(program, program.context, "pkg.loaders", key, line)

    # the `else:` of a flag whose body builds a DistributedSampler: the run of one process
    assert beside("make", 9) == 7
    assert beside("make", 7) is None  # that branch itself
    # an early return leaves the rest of the block to the other way of the flag
    assert beside("early", 13) == 14
    # a branch beside nothing distributed; a comparison (`args.name == 'coco'`), which chooses
    # something else than the kind of run; a flag both of whose branches do what only a
    # distributed run can: none tells the runs apart
    assert beside("plain", 18) is None
    assert beside("named", 26) is None
    assert beside("both", 30) is None


def test_a_base_class_attribute_is_read_across_modules(tmp_path):
    """ddplint/model/context.py attribute_assignments: what the methods of a project base class (and
    of its project bases) assign to `self.<attribute>`, each with the resolver of its module,
    for a subclass in another module; `...` for a binding of unknown value (`+=`)."""
    import libcst as cst

    from ddplint.analyses.ranks import classify

    index = _project(tmp_path, {
        "base": "import torch.distributed as dist\n\nclass Trainer:\n    def __init__(self):\n"
                "        self.primary = dist.get_rank() == 0\n        self.steps = 0\n\n"
                "class Counting(Trainer):\n    def step(self):\n        self.steps += 1\n",
        "train": "from pkg.base import Counting, Trainer\nfrom torch import nn\n\n"
                 "class Mine(Counting):\n    pass\n\nclass Net(nn.Module):\n    pass\n",
    })
    context = index.program.context
    [(value, resolve, _)] = context.attribute_assignments("pkg.train", "Trainer", "primary")
    assert classify(value, resolve).true_only_zero
    assert [classify(v, r).true_only_zero for v, r, _ in context.attribute_assignments("pkg.train", "Counting", "primary")] == [True]
    steps = context.attribute_assignments("pkg.train", "Counting", "steps")
    assert sorted(type(v).__name__ for v, _, _ in steps) == ["Ellipsis", "Integer"]
    assert context.attribute_assignments("pkg.train", "Trainer", "missing") == []
    assert context.attribute_assignments("pkg.train", "nn.Module", "primary") == []  # no project class


def test_a_flag_a_base_class_switches_under_rank_tests_guards_the_calls_of_another_module(tmp_path):
    """ddplint/model/context.py: `if self.verbose:` in a subclass's method, read across modules,
    is what the base class assigns it under the `if`s around each assignment (`True`, then
    `False` where `self.args.gpu != 0` in a distributed run), `args.gpu` being what the code
    that builds the trainer assigns the namespace it passes (`args.gpu = gpu`, the local rank
    its callers pass). Not a guard: a flag a method sets True again on every rank, one set True
    after the switch, or a namespace attribute that holds no rank."""
    base = ("class Base:\n    def __init__(self, args):\n        self.args = args\n        self.verbose = True\n"
            "        if self.args.distributed:\n            if self.args.gpu != 0:\n                self.verbose = False\n")
    train = ("from pkg.base import Base\n\nclass T(Base):\n    def train(self):\n        if self.verbose:\n"
             "            save()\n\n    def __init__(self, args):\n        super().__init__(args)\n\n"
             "def worker(gpu, args):\n    args.gpu = gpu\n    T(args).train()\n\n"
             "def main(args):\n    worker({}, args)\n")
    cases = [
        (base, "args.local_rank", True),
        (base, "args.ngpus", False),  # no rank
        (base + "    def resume(self):\n        self.verbose = True\n", "args.local_rank", False),
        (base + "        self.verbose = True\n", "args.local_rank", False),  # on every rank after the switch
    ]
    for number, (text, passed, guarded) in enumerate(cases):
        root = tmp_path / str(number)
        root.mkdir()
        context = _project(root, {"base": text, "train": train.format(passed)}).program.context
        assert context.guarded_at("pkg.train", "T.train", 6) is guarded, (text, passed)
    assert context.namespace_attribute("pkg.base", "Base.__init__", "args", "gpu") == ["args.local_rank"]


def test_samplers_and_loaders_are_followed_through_tuples_returns_and_parameters(tmp_path):
    from ddplint.model import loaders
    index = _project(tmp_path, {
        "data": "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build(train_set, val_set, exact):\n"
        "    train = DataLoader(train_set, sampler=DistributedSampler(train_set))\n"
        "    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=exact)\n"
        "    val = DataLoader(val_set, sampler=val_sampler) if val_set is not None else None\n"
        "    return train, val\n",
        "main": "from pkg.data import build\nfrom pkg.engine import run\n\n"
        "def main(a, b):\n    loaders = build(a, b, False)\n    train, val = loaders\n    run(val)\n",
        "engine": "def run(loader):\n    pass\n",
    })
    program = index.program
    (value,) = program.returned_data[("pkg.data", "build")]
    assert isinstance(value, Pack) and [type(item) for item in value.items] == [Loader, Loader]
    val = program.parameters[("pkg.engine", "run")]["loader"]
    assert isinstance(val, Loader) and val.passed_at == P("pkg/main.py:7")
    assert val.sampler.made_at == P("pkg/data.py:5") and val.sampler.shuffle is False
    # drop_last=exact, and the call passes False for `exact`: that call's sampler pads
    assert val.sampler.drop_last is False and val.sampler.pads
    assert val.sampler.drop_last_from == ("pkg.data", "build", "exact")
    assert loaders.evaluated(program, "pkg.data") == {}  # run() neither loops nor combines


def test_a_for_over_iter_of_a_loader_makes_the_loops_one_pass_and_next_of_iter_starts_a_new_one():
    functions = summarize(ast.parse(
        "def one_pass(loader):\n    for batch in enumerate(iter(loader)):\n        step(batch)\n\n"
        "def steps(loader, n):\n    for i in range(n):\n        batch = next(iter(loader))\n"
    )).functions
    (loop,) = functions["one_pass"].loops
    assert functions["one_pass"].pulls == () and loop.sources[0].held == Param("loader")  # iter() runs once, at the start
    assert [pull.line for pull in functions["steps"].pulls] == [7]  # each iteration starts a new pass


def test_what_one_call_passes_a_parameter_is_that_calls_argument_not_what_another_call_passes(tmp_path):
    index = _project(tmp_path, {
        "main": "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "class Runner:\n"
        "    def epoch(self, batches):\n        for batch in batches:\n            pass\n\n"
        "    def fit(self, dataset):\n"
        "        self.epoch(DataLoader(dataset, sampler=DistributedSampler(dataset)))\n"
        "        self.epoch(presplit(dataset))\n",
    })
    program = index.program
    fit = program.function("pkg.main", "Runner.fit")
    target = program.target("pkg.main", "Runner.fit", "Runner", "self.epoch")
    assert isinstance(program.parameters[target.function]["batches"], Loader)  # what some call passes
    first, second = (program.passed_for(fit, "self.epoch", line, target, "batches") for line in (9, 10))
    assert isinstance(program.evaluate("pkg.main", "Runner.fit", first), Loader)
    assert second == CallResult("presplit", 10) and program.evaluate("pkg.main", "Runner.fit", second) is None


def test_a_method_that_returns_its_argument_hands_it_back_and_others_do_not(tmp_path):
    from ddplint.model import loaders

    index = _project(tmp_path, {
        "backend": "class Backend:\n"
        "    def wrap(self, model, loader):\n        return loader\n"
        "    def maybe(self, loader):\n        if loader:\n            return loader\n"
        "    def other(self, loader):\n        loader = list(loader)\n        return loader\n",
        "main": "from torch.utils.data import DistributedSampler\nfrom pkg.backend import Backend\n\n"
        "def main(ds):\n    backend = Backend()\n    return DistributedSampler(ds)\n",
    })
    program = index.program
    assert loaders.hands_back(program, "pkg.main", "main", None, "Backend().wrap") == 1
    assert loaders.hands_back(program, "pkg.main", "main", None, "Backend().maybe") is None  # may return None
    assert loaders.hands_back(program, "pkg.main", "main", None, "Backend().other") is None
    assert loaders.hands_back(program, "pkg.main", "main", None, "len") is None


def test_the_files_a_path_names_compare_across_modules():
    from ddplint.model.files import path_key

    def key(code: str, paths=None):
        return path_key(ast.parse(code, mode="eval").body, paths)

    assert key('"ckpt/best.pt"') == key('os.path.join(out, "best.pt")') == key('out / "best.pt"') == "file:best.pt"
    assert key('f"{out}/best.pt"') == key('str(Path(out) / "best.pt")') == "file:best.pt"
    assert key("args.checkpoint") == key("self.args.checkpoint") == key("opt.checkpoint") == "option:checkpoint"
    assert key("cfg.MODEL.WEIGHTS") == "option:MODEL.WEIGHTS"
    assert key("path") is key("self.path") is key("load(x)") is None
    # a name formatted from a literal: its template, whatever the epoch or the folder
    assert key('f"model_{epoch}.pt"') == key('f"{out}/model_{epoch:03d}.pt"') == "file:model_{}.pt"
    assert key('os.path.join(out, "model_{}.pt".format(epoch))') == key('"model_%d.pt" % epoch') == "file:model_{}.pt"
    assert key("'{}/{}-{}.pth'.format(out, arch, 'best')") == "file:{}-best.pth"  # a literal handed to format
    assert key('f"{out}/{name}.pt"') is key('"%s.pth" % name') is key('f"{out}/{a}_{b}.pt"') is None  # no name of its own
    assert key("path", {"path": "file:best.pt"}) == "file:best.pt"


def test_saves_of_a_ddp_models_state_dict_and_not_of_the_inner_model(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "import torch\nfrom pkg.utils import save\n\ndef main(net, args):\n"
        "    model = DDP(net.cuda())\n    save(model, args)\n    model_without_ddp = model.module\n"
        "    torch.save(model_without_ddp.state_dict(), 'inner.pt')\n    torch.save(model.module.state_dict(), 'inner2.pt')\n"
        "    path = os.path.join(args.out, 'wrapped.pt')\n    torch.save({'model': model.state_dict()}, path)\n",
        "utils": "import torch\n\ndef save(model, args):\n    torch.save(model.state_dict(), args.checkpoint)\n",
    })
    values = index.program.values
    assert values.wrapper_saves() == [
        WrapperSave("file:wrapped.pt", "model", P("pkg/main.py:12")), WrapperSave("option:checkpoint", None, P("pkg/utils.py:4")),
    ]
    assert saved_from_wrapper(index.program, "file:wrapped.pt", "model") == P("pkg/main.py:12")
    assert saved_from_wrapper(index.program, "file:wrapped.pt", "optimizer") is None
    assert saved_from_wrapper(index.program, "file:inner.pt") is saved_from_wrapper(index.program, "file:inner2.pt") is None


def test_files_saved_with_their_tensors_on_the_host_and_what_spoils_that(tmp_path):
    """A file every write of which in its folder is a torch.save of host tensors; a move to the
    host on one way of an `if`, another write by a helper, through `with open(...)`, or in
    the module's own code spoil it; a parameter hides a module's path constant."""
    train = (
        "import os\nimport torch\nBEST = os.path.join('out', 'best.pt')\n\n"
        "def final(net, out):\n    net.cpu()\n    state = net.module.state_dict()\n"
        "    torch.save(state, os.path.join(out, 'final.pt'))\n    torch.save(net.cpu().state_dict(), BEST)\n\n"
        "def branch(net, half):\n    if half:\n        net.cpu()\n    torch.save(net.state_dict(), 'branch.pt')\n\n"
        "def helper(net):\n    net.cpu()\n    torch.save(net.state_dict(), 'helped.pt')\n    save_checkpoint(net.state_dict(), 'helped.pt')\n\n"
        "def opened(net):\n    net.cpu()\n    torch.save(net.state_dict(), 'opened.pt')\n"
        "    with open('out/opened.pt', 'wb') as handle:\n        torch.save(net.cuda().state_dict(), handle)\n\n"
        "def hidden(net, BEST):\n    torch.save(net.state_dict(), BEST)\n\n"
        "def module_code(net):\n    net.cpu()\n    torch.save(net.state_dict(), 'script.pt')\n"
    )
    index = _project(tmp_path, {"train": train, "script": "import torch\nnet = make()\ntorch.save(net.state_dict(), 'script.pt')\n"})
    assert saved_on_host(index, "pkg.train", "file:final.pt") == P("pkg/train.py:8")
    assert saved_on_host(index, "pkg.script", "file:best.pt") == P("pkg/train.py:9")
    for spoiled in ("branch.pt", "helped.pt", "opened.pt", "script.pt", "nowhere.pt"):
        assert saved_on_host(index, "pkg.train", f"file:{spoiled}") is None, spoiled


def test_a_state_dict_moved_to_the_host_item_by_item_holds_no_cuda_tensors(tmp_path):
    """`for key, param in state.items(): state[key] = param.cpu()` before the save (KAIR's and
    BasicSR's save_network); a loop that moves only some items, or stores a CUDA one, does not."""
    train = (
        "import torch\n\n"
        "def save(net):\n    state = net.state_dict()\n    for key, param in state.items():\n        state[key] = param.cpu()\n"
        "    torch.save(state, 'host.pt')\n\n"
        "def cast(net):\n    state = net.state_dict()\n    for key, param in state.items():\n        state[key] = param.to('cpu')\n"
        "    torch.save(state, 'cast.pt')\n\n"
        "def some(net):\n    state = net.state_dict()\n    for key, param in state.items():\n        if 'ema' in key:\n            state[key] = param.cpu()\n"
        "    torch.save(state, 'some.pt')\n\n"
        "def back(net):\n    state = net.state_dict()\n    for key, param in state.items():\n        state[key] = param.cpu()\n"
        "        state['extra'] = param.cuda()\n    torch.save(state, 'back.pt')\n"
    )
    index = _project(tmp_path, {"train": train})
    assert saved_on_host(index, "pkg.train", "file:host.pt") == P("pkg/train.py:7")
    assert saved_on_host(index, "pkg.train", "file:cast.pt") == P("pkg/train.py:13")
    for spoiled in ("some.pt", "back.pt"):
        assert saved_on_host(index, "pkg.train", f"file:{spoiled}") is None, spoiled


def test_files_of_python_values_and_tensors_made_on_the_host_hold_no_cuda_tensors(tmp_path):
    """Tensors made from Python data or by a factory with no device, a join of them, parsed
    options, a scheduler's state (also through a parameter every caller fills with one) and
    containers of those hold no CUDA tensors; a CUDA device, a parameter nothing shows, an item
    of unknown device or a model's state spoil that."""
    train = (
        "import argparse\nimport torch\nfrom torch.optim.lr_scheduler import StepLR\n\n"
        "def data(rows, n):\n"
        "    torch.save({'ids': torch.tensor([[1, 2], [3, 4]]), 'size': len(rows)}, 'ids.pt')\n"
        "    parts = [torch.zeros(n) for _ in range(4)]\n"
        "    torch.save(torch.cat(parts), 'parts.pt')\n"
        "    torch.save(torch.zeros(n, device='cuda'), 'gpu.pt')\n"
        "    torch.save(torch.tensor(rows), 'rows.pt')\n"
        "    state = {'step': n}\n"
        "    state['weights'] = rows.cuda()\n"
        "    torch.save(state, 'mixed.pt')\n\n"
        "def options(optimizer, model):\n"
        "    parser = argparse.ArgumentParser()\n"
        "    args = parser.parse_args()\n"
        "    torch.save(vars(args), 'args.pth')\n"
        "    scheduler = StepLR(optimizer, 10)\n"
        "    torch.save(scheduler.state_dict(), 'sched.pt')\n"
        "    keep(args)\n"
        "    keep_any(model.state_dict())\n\n"
        "def keep(value):\n"
        "    torch.save(value, 'kept.pth')\n\n"
        "def keep_any(value):\n"
        "    torch.save(value, 'any.pth')\n"
    )
    index = _project(tmp_path, {"train": train})
    for hosted, line in (("ids.pt", 6), ("parts.pt", 8), ("args.pth", 18), ("sched.pt", 20), ("kept.pth", 25)):
        assert saved_on_host(index, "pkg.train", f"file:{hosted}") == Place("pkg/train.py", line), hosted
    for spoiled in ("gpu.pt", "rows.pt", "mixed.pt", "any.pth"):
        assert saved_on_host(index, "pkg.train", f"file:{spoiled}") is None, spoiled


def test_state_dicts_fsdp_or_dcp_gather_onto_the_host(tmp_path):
    """Under `FSDP.state_dict_type(model, ..., config)` with `offload_to_cpu=True` (literal or
    through a local), the model's (and, by the optimizer config, the optimizer's) state dict is
    on the host; not outside the block, not for another model, not where the config is left
    off or only set one way of an `if`; DCP's `StateDictOptions(cpu_offload=True)` likewise."""
    train = (
        "import torch\nfrom torch.distributed.fsdp import FullStateDictConfig, FullOptimStateDictConfig\n\n"
        "def save(model, other, optim, multi):\n"
        "    policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)\n"
        "    with FSDP.state_dict_type(model, FULL, policy, FullOptimStateDictConfig(offload_to_cpu=True)):\n"
        "        state = model.state_dict()\n"
        "        torch.save(state, 'model.pt')\n"
        "        torch.save(FSDP.optim_state_dict(model, optim), 'optim.pt')\n"
        "        torch.save(model._forward_module.state_dict(), 'inner.pt')\n"
        "        torch.save(other.state_dict(), 'other.pt')\n"
        "    torch.save(model.state_dict(), 'after.pt')\n"
        "    with FSDP.state_dict_type(model, FULL, FullStateDictConfig(offload_to_cpu=multi)):\n"
        "        torch.save(model.state_dict(), 'maybe.pt')\n"
        "    if multi:\n"
        "        half = FullStateDictConfig(offload_to_cpu=True)\n"
        "    with FSDP.state_dict_type(model, FULL, half):\n"
        "        torch.save(model.state_dict(), 'half.pt')\n"
        "        torch.save(FSDP.optim_state_dict(model, optim), 'half_optim.pt')\n"
        "    options = StateDictOptions(full_state_dict=True, cpu_offload=True)\n"
        "    torch.save(get_model_state_dict(model, options=options), 'dcp.pt')\n"
        "    torch.save(get_model_state_dict(model, options=StateDictOptions(full_state_dict=True)), 'dcp_gpu.pt')\n"
    )
    index = _project(tmp_path, {"train": train})
    for hosted, line in (("model.pt", 8), ("optim.pt", 9), ("inner.pt", 10), ("dcp.pt", 21)):
        assert saved_on_host(index, "pkg.train", f"file:{hosted}") == Place("pkg/train.py", line), hosted
    for spoiled in ("other.pt", "after.pt", "maybe.pt", "half.pt", "half_optim.pt", "dcp_gpu.pt"):
        assert saved_on_host(index, "pkg.train", f"file:{spoiled}") is None, spoiled


def test_the_classes_wrapped_in_ddp_with_their_arguments_through_builders(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.models import build_model, Head\n\ndef wrap(model):\n"
        "    return DDP(model, find_unused_parameters=True)\n\ndef main(cfg):\n    model = build_model(cfg)\n"
        "    model = DDP(model.to(0), device_ids=[0])\n    head = wrap(Head())\n",
        "models": "class Net:\n    pass\n\nclass Head:\n    pass\n\ndef build_model(cfg):\n    net = Net()\n    return net\n",
    })
    values = index.program.values
    assert values.parts_in("pkg.models") == {
        "Net": [Part(Wrap(P("pkg/main.py:9"), False), ("pkg.models", "Net"))],
        "Head": [Part(Wrap(P("pkg/main.py:5"), True), ("pkg.models", "Head"))],
    }
    assert values.parts_in("pkg.main") == {}


def test_the_classes_whose_objects_a_wrapped_object_holds_with_the_steps(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.models import Net\n\ndef main():\n    model = DDP(Net(), device_ids=[0])\n",
        "models": "from torch import nn\nfrom pkg.blocks import Block, Stem\n\nclass Base(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.stem = Stem()\n\n"
        "class Net(Base):\n    def __init__(self):\n        super().__init__()\n"
        "        self.blocks = nn.ModuleList([Block() for _ in range(4)])\n\nclass Unused(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.block = Block()\n",
        "blocks": "from torch import nn\n\nclass Block(nn.Module):\n    pass\n\nclass Stem(nn.Module):\n    pass\n",
    })
    values = index.program.values
    wrap = Wrap(P("pkg/main.py:5"), False)
    assert values.parts_in("pkg.blocks") == {
        "Block": [Part(wrap, ("pkg.models", "Net"), (Step(P("pkg/models.py:12"), "Net", "Block", "builds"),))],
        "Stem": [Part(wrap, ("pkg.models", "Net"), (
            Step(P("pkg/models.py:9"), "Net", "Base", "derives"), Step(P("pkg/models.py:7"), "Base", "Stem", "builds"),
        ))],
    }
    assert set(values.parts_in("pkg.models")) == {"Net", "Base"}  # nothing wraps Unused, or builds it


def test_what_callers_do_with_a_returned_value(tmp_path):
    index = _project(tmp_path, {
        "helpers": "def make():\n    return {}\n\ndef other():\n    return {}\n\ndef third():\n    return {}\n",
        "main": "import pickle\nimport torch.multiprocessing as mp\nfrom pkg.helpers import make, other, third\n\n"
        "def relay():\n    return make()\n\ndef main(f):\n    mp.spawn(run, args=(relay(),))\n"
        "    counts = other()\n    print(len(counts), counts['a'], [counts[k] for k in 'ab'])\n"
        "    kept = third()\n    box = [kept]\n    pickle.dump(box, f)\n",
    })
    values = index.program.values
    assert Fates(values.program).result_fate("pkg.helpers", "make") == Fate(True, "spawn at pkg/main.py:9")
    assert Fates(values.program).result_fate("pkg.helpers", "other") == Fate(False, "pkg/main.py:10")
    assert Fates(values.program).result_fate("pkg.helpers", "third") is None  # put in a container: unknown
    assert Fates(values.program).result_fate("pkg.main", "main") is None  # no caller


def test_a_class_record_of_python_values_and_one_that_may_hold_tensors(tmp_path):
    index = _project(tmp_path, {
        "search": "import torch\n\nclass Search:\n    def save(self):\n        info = {}\n        info['epoch'] = self.epoch\n"
        "        info['memory'] = list(self.memory)\n        torch.save(info, self.path)\n\n"
        "class Slices:\n    def save(self, param):\n        torch.save({'type': 'slice', 'weight': param}, self.path)\n\n"
        "class Trainer:\n    def save(self):\n        torch.save({'epoch': self.epoch, 'model_state': self.model_state}, self.path)\n",
    })
    values = index.program.values
    assert own_record(values.program, "pkg.search", "Search", {"epoch", "memory"}) == P("pkg/search.py:8")
    assert own_record(values.program, "pkg.search", "Search", {"epoch", "model"}) is None  # a key it never saves
    assert own_record(values.program, "pkg.search", "Slices", {"type", "weight"}) is None  # a parameter: maybe a tensor
    assert own_record(values.program, "pkg.search", "Trainer", {"epoch"}) is None  # saved beside a model's state


_EVALUATE_SCRIPT = (
    "from torch.utils.data import DataLoader, DistributedSampler\n"
    "from pkg import engine\n\n"
    "def main(val_set):\n"
    "    sampler = DistributedSampler(val_set, shuffle=False)\n"
    "    engine.evaluate(DataLoader(val_set, sampler=sampler))\n"
)


def test_imports_in_top_level_if_and_try_blocks_name_the_modules_calls_reach(tmp_path):
    from ddplint.model import loaders

    builder = (
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def get_loaders(val_set):\n"
        "    return DataLoader(val_set, sampler=DistributedSampler(val_set))\n"
    )
    index = _project(tmp_path, {
        "cifar": builder, "imagenet": builder, "lookalike": builder,
        "utils": "import torch.distributed as dist\n\ndef reduce_mean(t):\n    dist.all_reduce(t)\n    return t\n",
        # A starting point (it wraps the model): the index, which links an importer to what it
        # imports, reads only top-level imports, so the callers of a builder imported so are
        # found only where the program reads them anyway.
        "train": _WRAP +
        "if 'cifar' in DATASET:\n    from pkg.cifar import get_loaders\n"
        "elif 'imagenet' in DATASET:\n    from pkg.imagenet import get_loaders\n"
        "try:\n    from pkg.utils import reduce_mean\nexcept ImportError:\n    reduce_mean = None\n"
        "if DATASET:\n    def hidden():\n        from pkg.lookalike import get_loaders as build\n\n"
        "def validate(loader):\n    for x in loader:\n        reduce_mean(x)\n\n"
        "def main(net, val_set):\n    model = DDP(net)\n    loader = get_loaders(val_set)\n    validate(loader)\n"
        "    validate(build(val_set))\n",
    })
    program = index.program
    assert program.summary("pkg.train").imports == {
        "get_loaders": ("pkg.cifar.get_loaders", "pkg.imagenet.get_loaders"), "reduce_mean": ("pkg.utils.reduce_mean",),
    }
    # Either import may run: both builders' loaders reach validate(); an import inside a
    # function binds no module name.
    assert set(loaders.evaluated(program, "pkg.imagenet")) == {4} and set(loaders.evaluated(program, "pkg.cifar")) == {4}
    assert loaders.evaluated(program, "pkg.lookalike") == {}
    tree = ast.parse("if a:\n    import x.y\n    import p.q as r\n    from . import s\nelse:\n    from .t import *\n"
                     "try:\n    pass\nfinally:\n    from ..u import v as w\n")
    assert summarize(tree).imports == {"x": ("x",), "r": ("p.q",), "s": (".s",), "w": ("..u.v",)}
    assert summarize(ast.parse("import os\ndef f():\n    import sys\n")).imports == {}


def test_questions_read_past_the_solutions_bound_and_a_helper_past_theirs_is_unknown(tmp_path, monkeypatch):
    from ddplint.model import loaders, program as model

    modules = {
        "main": _EVALUATE_SCRIPT,
        "engine": "from pkg import utils, merging\n\n"
        "def evaluate(loader):\n    for x in loader:\n        pass\n    utils.reduce(x)\n    merging.merge(x)\n",
        "utils": "import torch.distributed as dist\n\ndef reduce(t):\n    dist.all_reduce(t)\n",
        "merging": "def merge(t):\n    return t\n",
    }
    monkeypatch.setattr(model, "MAX_MODULES", 1)  # the solution reads its starting point alone
    found = {}
    for asked in (3, 2, 1):
        monkeypatch.setattr(model, "MAX_ASKED", asked)
        (tmp_path / str(asked)).mkdir()
        index = _project(tmp_path / str(asked), modules)
        assert index.program.solved == 1
        found[asked] = set(loaders.evaluated(index.program, "pkg.main"))
    # 3: engine, utils and merging read, nothing places results by id; 2: merging is past the
    # bound, and may (unknown: silent); 1: where evaluate() combines is unknown.
    assert found == {3: {5}, 2: set(), 1: set()}
    modules["merging"] = "import numpy as np\n\ndef merge(t):\n    return np.unique(t)\n"
    monkeypatch.setattr(model, "MAX_ASKED", 3)
    (tmp_path / "dedup").mkdir()
    assert loaders.evaluated(_project(tmp_path / "dedup", modules).program, "pkg.main") == {}


def test_every_tuple_a_builder_returns_in_its_branches_is_followed_to_the_evaluation(tmp_path):
    from ddplint.model import loaders

    index = _project(tmp_path, {
        "data": "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build(name, val_set):\n"
        "    if name == 'coco':\n"
        "        sampler = DistributedSampler(val_set, drop_last=True)\n"  # does not pad: silent
        "        return DataLoader(val_set, sampler=sampler), 80\n"
        "    elif name == 'voc':\n"
        "        sampler = DistributedSampler(val_set)\n"
        "        return DataLoader(val_set, sampler=sampler), 21\n"
        "    sampler = DistributedSampler(val_set, shuffle=False)\n"
        "    return DataLoader(val_set, sampler=sampler), 19\n",
        "main": "import torch.distributed as dist\nfrom pkg.data import build\n\n"
        "def validate(loader):\n    for x in loader:\n        dist.all_reduce(x)\n\n"
        "def main(name, val_set):\n    loader, classes = build(name, val_set)\n    validate(loader)\n",
    })
    assert set(loaders.evaluated(index.program, "pkg.data")) == {8, 10}


def test_functions_that_control_ddps_gradient_sync():
    summary = summarize(ast.parse(
        "def maybe_no_sync(model, sync):\n"
        "    return contextlib.nullcontext() if sync else model.no_sync()\n"
        "def set_sync(model, on):\n"
        "    if hasattr(model, 'require_backward_grad_sync'):\n"
        "        model.require_backward_grad_sync = on\n"
        "def sync_now(model):\n"
        "    return model.require_backward_grad_sync or model.sync()\n"
    ))
    assert [f.sync_control for f in summary.functions.values()] == [True, True, False]


def test_a_ddp_model_returned_in_a_tuple_is_found_at_its_position(tmp_path):
    index = _project(tmp_path, {
        "setup": _WRAP + "def setup(net):\n    return DDP(net), 'cuda'\n\ndef plain(net):\n    return net, 'cuda'\n",
        "main": "from pkg.setup import plain, setup\n\ndef main(net):\n    model, device = setup(net)\n\n"
        "def single(net):\n    model, device = plain(net)\n",
    })
    program = index.program
    assert program.result_of("pkg.main", "setup", None, 0) == Wrapped(P("pkg/setup.py:3"))
    assert program.result_of("pkg.main", "setup", None, 1) is None
    assert program.result_of("pkg.main", "setup", None) is None  # the tuple itself is no DDP model
    assert program.result_of("pkg.main", "plain", None, 0) is None
    assert program.receives_wrapped("pkg.main")


def test_what_accelerate_prepares_is_followed_to_the_functions_it_is_handed_to(tmp_path):
    index = _project(tmp_path, {
        "main": "from accelerate import Accelerator\nfrom pkg.loop import fit\n\ndef main(model, opt):\n"
        "    accelerator = Accelerator()\n    model, opt = accelerator.prepare(model, opt)\n    fit(accelerator, model)\n"
        "    other = Other()\n    net, opt = other.prepare(model, opt)\n    fit(other, net)\n",
        "loop": "def fit(accelerator, model):\n    pass\n",
    })
    program = index.program
    assert program.held(program.parameters, ("pkg.loop", "fit"), Prepared) == {"model": Prepared(P("pkg/main.py:6"), P("pkg/main.py:7"))}
    assert program.receives_wrapped("pkg.loop")


def test_a_sampler_made_under_a_parameter_test_a_calls_literal_rules_out_is_not_its_value(tmp_path):
    from ddplint.model import loaders

    index = _project(tmp_path, {
        "data": "from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler\n\n"
        "def build(ds, split):\n"
        "    if split == 'train':\n"
        "        sampler = DistributedSampler(ds)\n"
        "    else:\n"
        "        sampler = SequentialSampler(ds)\n"
        "    return DataLoader(ds, sampler=sampler)\n\n"
        "def build_eval(ds, is_train=False):\n"
        "    if not is_train:\n"
        "        sampler = DistributedSampler(ds, shuffle=False)\n"
        "    else:\n"
        "        sampler = DistributedSampler(ds, drop_last=True)\n"
        "    return DataLoader(ds, sampler=sampler)\n",
        "main": "import torch.distributed as dist\nfrom pkg.data import build, build_eval\n\n"
        "def evaluate(loader):\n    for x in loader:\n        dist.all_reduce(x)\n\n"
        "def main(ds):\n    evaluate(build(ds, 'val'))\n    evaluate(build(ds, split='test'))\n"
        "    evaluate(build_eval(ds, is_train=False))\n",
    })
    program = index.program
    assert set(loaders.evaluated(program, "pkg.data")) == {12}  # not 5: only 'train' gets it
    assert loaders.built(program, "pkg.data.build", "pkg.main", [[1, "val"]]) == {}
    assert loaders.built(program, "pkg.data.build", "pkg.main", [["split", "train"]])["loader"].made_at == P("pkg/data.py:5")
    assert loaders.built(program, "pkg.data.build", "pkg.main", [])["loader"].made_at == P("pkg/data.py:5")  # unknown: kept


def test_a_loader_kept_on_self_is_evaluated_by_a_method_that_loops_over_the_attribute(tmp_path):
    from ddplint.model import loaders

    index = _project(tmp_path, {
        "data": "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build(ds):\n    return DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False))\n",
        "trainer": "import torch.distributed as dist\nfrom pkg.data import build\n\n"
        "class Trainer:\n"
        "    def __init__(self, ds):\n        self.val_loader = build(ds)\n"
        "    def validate(self):\n        for x in self.val_loader:\n            pass\n        dist.all_reduce(x)\n"
        "    def local(self):\n        for x in self.val_loader:\n            print(x)\n",
    })
    program = index.program
    assert program.kept_evaluation("pkg.trainer", "Trainer", "val_loader") == Evaluation(
        "Trainer.validate", P("pkg/trainer.py:8"), Collective("all_reduce", P("pkg/trainer.py:10")))
    (found,) = loaders.evaluated(program, "pkg.data").values()
    assert found.kept_as == "val_loader" and found.handed_at == P("pkg/trainer.py:6")


def test_a_loader_a_constructor_hands_to_its_base_init_is_evaluated_by_the_subclass(tmp_path):
    """`super().__init__(model, val_data)` keeps the loader on the object the subclass makes;
    a base that keeps nothing, or a super call of another method, hands nothing on."""
    index = _project(tmp_path, {
        "base": "class BaseTrainer:\n"
        "    def __init__(self, model, val_data):\n        self.model = model\n        self.val_data = val_data\n",
        "engine": "import torch.distributed as dist\nfrom pkg.base import BaseTrainer\n\n"
        "class Trainer(BaseTrainer):\n"
        "    def __init__(self, model, val_data):\n        super().__init__(model, val_data=val_data)\n"
        "    def validate(self):\n        for x in self.val_data:\n            pass\n        dist.all_reduce(x)\n\n"
        "class Other(BaseTrainer):\n"
        "    def __init__(self, model, val_data):\n        super().setup(model, val_data)\n"
        "    def validate(self):\n        for x in self.val_data:\n            pass\n        dist.all_reduce(x)\n\n"
        "def main(model, loader):\n    Trainer(model, loader)\n    Other(model, loader)\n",
    })
    program = index.program
    assert program.evaluation("pkg.engine", "main", None, "Trainer", 1, None) == Evaluation(
        "Trainer.validate", P("pkg/engine.py:8"), Collective("all_reduce", P("pkg/engine.py:10")))
    assert program.evaluation("pkg.engine", "main", None, "Other", 1, None) is None


def test_a_call_on_a_local_object_is_its_class_method_in_the_values_the_program_follows(tmp_path):
    index = _project(tmp_path, {
        "backend": "class Backend:\n    def wrap(self, loader):\n        return loader\n",
        "main": "from torch.utils.data import DataLoader, DistributedSampler\nfrom pkg.backend import Backend\n\n"
        "def run(loader):\n    pass\n\n"
        "def main(ds):\n    backend = Backend()\n"
        "    loader = backend.wrap(DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False)))\n    run(loader)\n",
    })
    found = index.program.parameters[("pkg.main", "run")]["loader"]
    assert isinstance(found, Loader) and found.sampler.made_at == P("pkg/main.py:9")


def test_a_function_that_cuts_results_to_a_length_trims(tmp_path):
    functions = summarize(ast.parse(
        "def a(preds, loader):\n    return preds[: len(loader.dataset)]\n\n"
        "def b(preds, dataset):\n    n = len(dataset)\n    return preds[:n]\n\n"
        "def c(preds, k):\n    return preds[:k]\n"
    )).functions
    assert functions["a"].deduplicates and functions["b"].deduplicates and not functions["c"].deduplicates
    split = summarize(ast.parse("def d(dataset):\n    n = len(dataset)\n    return list(range(n))[n // 2:n]\n"))
    assert not split.functions["d"].deduplicates  # a split of the dataset, not a trim


def test_results_keyed_by_sample_id_deduplicate_and_comprehensions_loop(tmp_path):
    functions = summarize(ast.parse(
        "def a(everyone, results):\n    for ids, preds in everyone:\n        results.update(zip(ids, preds))\n\n"
        "def b(stats, preds):\n    stats.update(preds=preds)\n    stats.update(preds)\n\n"
        "def c(model, loader):\n    return [model(x) for x, _ in loader]\n"
    )).functions
    assert functions["a"].deduplicates and not functions["b"].deduplicates
    assert [(loop.iterated, loop.trains) for loop in functions["c"].loops] == [(("loader",), False)]


def test_a_function_that_makes_one_pass_over_its_loader_and_those_that_may_do_more(tmp_path):
    from ddplint.model import loaders

    index = _project(tmp_path, {
        "engine": "def train(model, loader, log):\n    n = len(loader)\n"
        "    for i, batch in enumerate(log.every(loader, 10)):\n        model(batch)\n    return loader.dataset\n"
        "def sets(loader, epoch):\n    loader.sampler.set_epoch(epoch)\n    for batch in loader:\n        pass\n"
        "def hands(loader, hook):\n    hook(loader)\n    for batch in loader:\n        pass\n"
        "def rebinds(loader):\n    loader = iter(loader)\n    for batch in loader:\n        pass\n"
        "def endless(loader):\n    while True:\n        for batch in loader:\n            yield batch\n",
        "main": "from pkg import engine\n",
    })
    program = index.program
    assert loaders.passed_once(program, "pkg.engine.train", "pkg.main") == loaders.OnePass(1, "loader", "train", P("pkg/engine.py:3"))
    for name in ("sets", "hands", "rebinds", "endless", "missing"):
        assert loaders.passed_once(program, f"pkg.engine.{name}", "pkg.main") is None


def test_a_helper_saves_a_ddp_models_state_dict_to_the_files_its_callers_name(tmp_path):
    index = _project(tmp_path, {
        "main": _WRAP + "from pkg.utils import save_checkpoint\n\ndef main(net, ema, args):\n"
        "    model = DDP(net.cuda())\n    save_checkpoint(model, 3, args.ckpt)\n    save_checkpoint(ema, 3, args.ema)\n"
        "    save_checkpoint(model.module, 3, path='inner.pt')\n    save_checkpoint(model, 3, path='last.pt')\n",
        "utils": "import torch\n\ndef save_checkpoint(model, epoch, path):\n"
        "    torch.save({'epoch': epoch, 'model': model.state_dict()}, path)\n",
    })
    values = index.program.values
    assert values.wrapper_saves() == [
        WrapperSave("file:last.pt", "model", P("pkg/utils.py:4")), WrapperSave("option:ckpt", "model", P("pkg/utils.py:4")),
    ]


def test_a_helper_of_another_module_saves_whatever_rank_runs_it(tmp_path):
    index = _project(tmp_path, {
        "utils": "import torch\nimport torch.distributed as dist\n\n"
        "def save_checkpoint(state, path):\n    torch.save(state, path)\n"
        "def save_on_master(state, path):\n    if dist.get_rank() == 0:\n        torch.save(state, path)\n"
        "def save_best(state, path, best):\n    if best:\n        torch.save(state, path)\n"
        "def save_early(state, path, args):\n    if not args.save:\n        return\n    torch.save(state, path)\n",
        "engine": "from pkg.utils import save_checkpoint\n\ndef fit(model, epochs):\n"
        "    for epoch in range(epochs):\n        save_checkpoint(model.state_dict(), 'last.pt')\n",
        "main": "from pkg import engine, utils\n",
    })
    values = index.program.values
    assert saving_helper(index.module_view("pkg.main"), "pkg.utils.save_checkpoint") == P("pkg/utils.py:5")
    assert saving_helper(index.module_view("pkg.main"), "pkg.engine.fit") == P("pkg/utils.py:5")
    for name in ("save_on_master", "save_best", "save_early", "missing"):
        assert saving_helper(index.module_view("pkg.main"), f"pkg.utils.{name}") is None
    assert saving_helper(index.module_view("pkg.utils"), "pkg.utils.save_checkpoint") is None  # judged in its own module


def test_a_loader_taken_from_a_dict_or_a_list_of_appended_loaders_is_followed(tmp_path):
    index = _project(tmp_path, {
        "data": "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build(train, val):\n"
        "    return {'train': DataLoader(train, sampler=DistributedSampler(train)),\n"
        "            'val': DataLoader(val, sampler=DistributedSampler(val, shuffle=False))}\n\n"
        "def samplers_of(datasets):\n    samplers = []\n    for ds in datasets:\n"
        "        samplers.append(DistributedSampler(ds, shuffle=False))\n    return samplers\n\n"
        "def loaders_of(datasets, samplers):\n    loaders = []\n    for ds, sampler in zip(datasets, samplers):\n"
        "        loaders.append(DataLoader(ds, sampler=sampler))\n    return loaders\n\n"
        "def listed(datasets, samplers):\n    return [DataLoader(ds, sampler=s) for ds, s in zip(datasets, samplers)]\n",
        "main": "from pkg.data import build, listed, loaders_of, samplers_of\n\n"
        "def run(loader, other):\n    pass\n\n"
        "def main(train, val):\n    loaders = build(train, val)\n    run(loaders['val'], loaders['nope'])\n"
        "    first, second = loaders_of([train, val], samplers_of([train, val]))\n    run(second, None)\n"
        "    third = listed([val], samplers_of([val]))[0]\n    run(third, None)\n",
    })
    found = index.program.parameters[("pkg.main", "run")]
    assert "other" not in found
    loader = found["loader"]
    assert isinstance(loader, Loader) and loader.sampler.made_at == P("pkg/data.py:5")
    values = index.program.values_of("pkg.main", "main", Item(CallResult("loaders_of", 9), 1))
    assert [value.sampler.made_at for value in values] == [P("pkg/data.py:10")]
    values = index.program.values_of("pkg.main", "main", Item(CallResult("listed", 11), 0))
    assert [value.sampler.made_at for value in values] == [P("pkg/data.py:10")]
    values = index.program.values_of("pkg.main", "main", Item(CallResult("build", 7), "val"))
    assert [(value.sampler.made_at, value.sampler.shuffle) for value in values] == [(P("pkg/data.py:5"), False)]


def test_a_chain_of_locals_each_made_from_the_two_before_is_read_to_a_bounded_depth():
    """NASNet's forward: `x2 = cell_2(x1, x0)`, `x3 = cell_3(x2, x1)`, ... Each local wraps what
    the two before it hold, so the paths from the parameter double every two steps (a 40-long
    chain has about 10**8); what a loop over the last one iterates is read only a few calls
    deep, and the summary is made at once. A loop over `enumerate(tqdm(loader))` through a
    local is still followed to the parameter."""
    chain = "".join(f"    x{i} = cell_{i}(x{i - 1}, x{i - 2})\n" for i in range(2, 42))
    tree = ast.parse(
        "def forward(x0):\n    x1 = stem(x0)\n" + chain + "    for item in x41:\n        pass\n"
        "def fit(loader):\n    bar = tqdm(loader)\n    for i, batch in enumerate(bar):\n        pass\n"
    )
    functions = summarize(tree).functions
    (loop,) = functions["forward"].loops
    assert all(len(source.calls) <= 4 for source in loop.sources if hasattr(source, "calls"))
    (loop,) = functions["fit"].loops
    assert (Param("loader"), (("enumerate", 0), ("tqdm", 0))) in [(source.held, source.calls) for source in loop.sources]


def test_a_helpers_collective_is_found_whichever_question_is_asked_first(tmp_path):
    """guided-diffusion's `dist_util.load_state_dict` bcasts on every path. Linting dist_util.py
    first asks of its own `bcast` call at depth 0 (the call itself is no helper's collective);
    that answer must not stand for the same call seen from a caller one helper down, or the
    caller's rank-0 call of the helper (a hang) goes unreported whenever dist_util.py is linted
    first."""
    index = _project(tmp_path, {
        "dist_util": "import torch.distributed as dist\n\ndef load(path):\n    if dist.get_rank() == 0:\n"
                     "        dist.broadcast_object_list([path])\n    else:\n        dist.broadcast_object_list([None])\n",
        "train": "from pkg import dist_util\n\ndef resume(path):\n    return dist_util.load(path)\n",
    })
    program = index.program
    assert program.collective("pkg.dist_util", "load", None, "dist.broadcast_object_list") is None  # the call itself
    assert program.collective("pkg.train", "resume", None, "dist_util.load") == Collective(
        "broadcast_object_list", P("pkg/dist_util.py:5")
    )


def test_a_rules_question_about_the_linted_module_is_not_refused_by_the_bounds(tmp_path, monkeypatch):
    from ddplint.model import program as model
    from ddplint.rules.ddp004_torch_load_without_map_location import class_saves_on_host

    index = _project(tmp_path, {
        "opt": "import torch\n\nclass DistOpt:\n"
        "    def save_state(self, filename):\n        state = {'param': torch.empty(4, device='cpu')}\n"
        "        torch.save(state, filename)\n\n"
        "    def load_state(self, filename):\n        return torch.load(filename)\n",
        "other": "x = 1\n",
    })
    monkeypatch.setattr(model, "MAX_MODULES", 0)  # a repository of hundreds of modules, read past the bound
    program = index.program
    assert "pkg.opt" not in program._summaries and program.summary("pkg.other") is None and program.refused
    # the class saves the file it is handed with CPU tensors only: its own load reads no CUDA tensors
    assert class_saves_on_host(program, "pkg.opt", "DistOpt")


def test_what_a_base_classs_init_keeps_from_super_init_the_subclass_holds_too(tmp_path):
    """`super().__init__(model, ...)` hands the constructor's DDP model to a base class of another
    module whose `__init__` keeps it (`self.model = model`): the subclass's methods read it."""
    index = _project(tmp_path, {
        "base": "class BaseTrainer:\n    def __init__(self, model, optimizer):\n        self.model = model\n"
        "        self.optimizer = optimizer\n",
        "trainer": "from pkg.base import BaseTrainer\n\nclass Trainer(BaseTrainer):\n"
        "    def __init__(self, model, optimizer, loader):\n        super().__init__(model, optimizer)\n"
        "        self.loader = loader\n",
        "main": _WRAP + "from pkg.trainer import Trainer\n\ndef main(net, opt):\n    Trainer(DDP(net), opt, [])\n",
    })
    program = index.program
    held = program.attributes[("pkg.trainer", "Trainer")]["model"]
    assert isinstance(held, Wrapped) and held.wrapped_at == P("pkg/main.py:5")
    assert "optimizer" not in program.held(program.attributes, ("pkg.trainer", "Trainer"), Wrapped)
    assert program.receives_wrapped("pkg.trainer")


def test_a_chained_star_import_binds_what_the_inner_one_bound(tmp_path):
    """`from pkg import *` in main, where pkg/__init__.py runs `from pkg.comm import *`: Python
    binds in main every public name pkg's namespace holds, comm's too; a private one it never
    binds. Every question about main's calls then reaches comm's functions."""
    index = _project(tmp_path, {
        "comm": "import torch.distributed as dist\n\ndef reduce_all(t):\n    dist.all_reduce(t)\n\ndef _hidden(t):\n    return t\n",
        "main": "from pkg import *\n\ndef evaluate(loader):\n    for x in loader:\n        pass\n    reduce_all(x)\n",
    })
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg.comm import *\n")
    index = project.build(str(tmp_path))
    program = index.program
    assert program.qualify("pkg.main", "reduce_all") == "pkg.comm.reduce_all"
    assert program.qualify("pkg.main", "_hidden") is None
    assert program.combines("pkg.main", "evaluate", None, "reduce_all") == Collective("all_reduce", P("pkg/comm.py:4"))
