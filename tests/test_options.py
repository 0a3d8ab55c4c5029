"""The option analysis: the value every documented run gets for an argparse option, and the
truth of a test of options in every documented run (DDP016, DDP021, DDP027 rely on it)."""

import textwrap

import libcst as cst

from ddplint.analyses.options import ParserOptions
from ddplint.engine.lint import traverse
from ddplint.model import project
from ddplint.semantic.model import SemanticModel

PARSER = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=None)
parser.add_argument("--workers", type=int, default=0)
parser.add_argument("--accum-steps", type=int, default=4)
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--no-ema", dest="ema", action="store_false")
parser.add_argument("--name", required=True)
parser.add_argument("--resume")
args = parser.parse_args()
"""


def options(extra=""):
    module = cst.parse_module(textwrap.dedent(PARSER) + textwrap.dedent(extra))
    model = SemanticModel(module)
    for analysis in ParserOptions.requires + (ParserOptions,):
        model.add_analysis(analysis(model))
    traverse(module, model, [])
    return model.get(ParserOptions)


def holds(found, test):
    return found.holds_in_every_run(cst.parse_expression(test))


def test_a_test_of_options_left_at_their_defaults_has_one_value_in_every_run():
    found = options()
    assert found.default_for(cst.parse_expression("args.workers")) == 0
    assert found.default_for(cst.parse_expression("args.accum_steps")) == 4
    assert holds(found, "args.seed is not None") is False
    assert holds(found, "args.seed is None") is True
    assert holds(found, "args.resume") is False
    assert holds(found, "args.fp16 or args.workers > 0") is False
    assert holds(found, "not args.ema") is False
    assert holds(found, "args.accum_steps > 1 and args.ema") is True
    assert holds(found, "args.seed is not None and unknown") is False  # one false part decides an `and`


def test_an_option_a_run_must_pass_or_the_file_sets_otherwise_is_unknown():
    found = options("args.resume = cfg.resume\nparser.set_defaults(workers=8)\n")
    assert holds(found, "args.name") is None  # required: every run passes it
    assert holds(found, "args.resume") is None  # set from a configuration
    assert found.default_for(cst.parse_expression("args.workers")) is None  # set_defaults
    assert holds(found, "args.seed >= 0") is None  # `None >= 0` fails: not known
    assert holds(found, "args.seed is not None or unknown") is None
    assert holds(options("vars(args).update(cfg)\n"), "args.seed is not None") is None


def test_code_in_a_branch_no_documented_run_takes_never_runs():
    found = options()
    assert found.never_runs(((cst.parse_expression("args.seed is not None"), False),))
    assert found.never_runs(((cst.parse_expression("args.seed is None"), True),))  # its else
    assert not found.never_runs(((cst.parse_expression("args.seed is None"), False),))
    assert not found.never_runs(((cst.parse_expression("args.other"), False),))


def test_a_count_of_one_makes_every_step_a_multiple():
    found = options("ACCUM = 1\n")
    assert holds(found, "(step + 1) % ACCUM == 0") is True  # every step
    assert holds(found, "step % ACCUM != 0 and unknown") is False
    assert holds(found, "(step + 1) % args.accum_steps == 0") is None  # 4: some steps only


def test_an_option_the_documents_tell_the_user_to_set_is_not_known(tmp_path):
    from ddplint.model import project

    parser = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--update-freq', type=int, default=1)\n"
    (tmp_path / ".git").write_text("")
    (tmp_path / "main.py").write_text(parser)
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=8 main.py --update-freq 1\n")
    (tmp_path / "OPTIONS.md").write_text("`--update-freq 1` steps once per backward.\n")
    assert not project.build(str(tmp_path)).describes_option("--update-freq", "1", "")  # a command, and the default shown
    (tmp_path / "README.md").write_text("With fewer GPUs, set `--update-freq` above 1 to accumulate gradients.\n")
    assert project.build(str(tmp_path)).describes_option("--update-freq", "1", "")


def test_only_the_documents_around_a_script_describe_its_options(tmp_path):
    from ddplint.model import project

    (tmp_path / ".git").write_text("")
    for folder in ("examples/a", "examples/b"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "train.py").write_text("import argparse\n")
    (tmp_path / "examples/a/README.md").write_text("Pass `--seed` to reproduce a run.\n")
    built = project.build(str(tmp_path))
    assert built.describes_option("--seed", "None", "examples/a")
    assert not built.describes_option("--seed", "None", "examples/b")  # another example's document
    assert built.describes_option("--seed", "None", "examples")  # a document below the folder


TRAIN = """
import argparse

def train(model, loader, accum_steps=1, workers=2):
    for step, batch in enumerate(loader):
        if step % accum_steps == 0:
            pass

def evaluate(model, loader, workers):
    pass

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum-steps", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    train(model, loader, accum_steps=args.accum_steps, workers=args.workers)
    train(model, loader)
    evaluate(model, loader, 4)
    evaluate(model, loader, args.workers)

def unused(model, accum_steps=1):
    pass
"""


def parameter_values(tmp_path, source, *names):
    """default_for of each parameter `function.name` of `train.py`, a file of a project."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    view = project.build(str(tmp_path)).view(str(tmp_path / "train.py"))
    module = cst.parse_module(textwrap.dedent(source))
    model = SemanticModel(module, project=view)
    for analysis in ParserOptions.requires + (ParserOptions,):
        model.add_analysis(analysis(model))
    scopes = {}

    class Scopes:  # the scope of each function, taken as the walk enters it
        def visit_FunctionDef(self, node):
            scopes[node.name.value] = model.frame.scope

    traverse(module, model, [Scopes()])
    found = model.get(ParserOptions)
    return [found.default_for(cst.Name(name), scopes[function]) for function, _, name in (n.partition(".") for n in names)]


def test_a_parameter_gets_the_value_every_call_in_the_file_gives_it(tmp_path):
    # every call gives `accum_steps` 1 (an option left at its default 1, or its own default);
    # `workers` gets 0 from the option but 2 by default where a call leaves it out
    assert parameter_values(tmp_path, TRAIN, "train.accum_steps", "train.workers") == [1, None]
    # `evaluate` gets 4 from one call and 0 from the other; `unused` is never called
    assert parameter_values(tmp_path, TRAIN, "evaluate.workers", "unused.accum_steps") == [None, None]


def test_a_parameter_that_a_call_gives_another_value_or_the_function_rebinds_is_unknown(tmp_path):
    passed = TRAIN.replace("train(model, loader)\n", "train(model, loader, 4)\n")
    assert parameter_values(tmp_path, passed, "train.accum_steps") == [None]
    rebound = TRAIN.replace("    for step, batch", "    accum_steps = 1\n    for step, batch")
    assert parameter_values(tmp_path, rebound, "train.accum_steps") == [None]
    spread = TRAIN.replace("train(model, loader)\n", "train(model, loader, **extra)\n")
    assert parameter_values(tmp_path, spread, "train.accum_steps") == [None]


def imported_options(tmp_path, script, parser_module, commands=""):
    """ParserOptions of `train.py`, a script whose parser `opts.py` builds."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "opts.py").write_text(textwrap.dedent(parser_module))
    (tmp_path / "train.py").write_text(textwrap.dedent(script))
    (tmp_path / "run.sh").write_text(commands)
    view = project.build(str(tmp_path)).view(str(tmp_path / "train.py"))
    module = cst.parse_module(textwrap.dedent(script))
    model = SemanticModel(module, project=view)
    for analysis in ParserOptions.requires + (ParserOptions,):
        model.add_analysis(analysis(model))
    traverse(module, model, [])
    return model.get(ParserOptions)


OPTS = PARSER.replace("args = parser.parse_args()\n", "def parse_args():\n    return parser.parse_args()\n")
SCRIPT = "from opts import parse_args\nargs = parse_args()\n"


def test_the_options_of_a_parser_another_module_builds_have_their_defaults(tmp_path):
    found = imported_options(tmp_path, SCRIPT, OPTS, "torchrun --nproc_per_node=2 train.py --seed 3\n")
    own = options()
    for option in ("args.workers", "args.accum_steps"):
        assert found.default_for(cst.parse_expression(option)) == own.default_for(cst.parse_expression(option))
    for test in ("args.fp16", "not args.ema", "args.resume", "args.name"):
        assert holds(found, test) is holds(own, test), test
    assert holds(found, "args.seed is None") is None  # run.sh passes --seed
    assert holds(found, "args.undeclared") is None


def test_an_imported_option_rebound_by_either_module_or_set_by_name_is_unknown(tmp_path):
    rebound_here = imported_options(tmp_path, SCRIPT + "args.workers = 4\n", OPTS)
    assert rebound_here.default_for(cst.parse_expression("args.workers")) is None
    rebound_there = imported_options(tmp_path, SCRIPT, OPTS + "parser.set_defaults(workers=8)\n")
    assert rebound_there.default_for(cst.parse_expression("args.workers")) is None
    by_name = imported_options(tmp_path, SCRIPT, OPTS + "def load(args, cfg):\n    vars(args).update(cfg)\n")
    assert by_name.default_for(cst.parse_expression("args.accum_steps")) is None
    assert rebound_there.default_for(cst.parse_expression("args.accum_steps")) == 4


def test_a_script_importing_no_parser_knows_no_option(tmp_path):
    found = imported_options(tmp_path, "import opts\nargs = object()\n".replace("import opts\n", "import os\n"), OPTS)
    assert found.default_for(cst.parse_expression("args.workers")) is None


ACCUMULATING = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from opts import parse_args

def main():
    args = parse_args()
    model = DDP(build().cuda(), device_ids=[0])
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / args.accum_steps
        loss.backward()
        if (step + 1) % args.accum_steps == 0:
            optimizer.step()

if __name__ == "__main__":
    main()
"""


def accumulation_flagged_only_when_raised(tmp_path, run, files, script, option, finding):
    """Write `files`; launch `script` with `option` left out, passed 1 and passed 4: only the
    last accumulates, and only then is `finding` reported."""
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run.cwd = tmp_path
    for passed, flagged in (("", False), (f" {option} 1", False), (f" {option} 4", True)):
        (tmp_path / "run.sh").write_text(f"torchrun --nproc_per_node=4 {script}{passed}\n")
        output = run("check", "--no-cache", "--select", "DDP021", ".").stdout
        assert (finding in output) is flagged, (passed, output)


def test_ddp021_reads_the_accumulation_count_from_a_parser_another_module_builds(tmp_path, run):
    parser = 'import argparse\ndef parse_args():\n    p = argparse.ArgumentParser()\n    p.add_argument("--accum_steps", type=int, default=1)\n    return p.parse_args()\n'
    files = {"opts.py": parser, "train.py": ACCUMULATING}
    accumulation_flagged_only_when_raised(tmp_path, run, files, "train.py", "--accum_steps", "train.py:11:9: DDP021")


ENGINE = """
import torch

def train_one_epoch(model, loader, optimizer, args=None):
    accum_iter = args.accum_iter
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()
"""

SCRIPT_WITH_ENGINE = """
import argparse
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from engine import train_one_epoch

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum_iter", type=int, default=1)
    args = parser.parse_args()
    torch.distributed.init_process_group("nccl")
    model = DDP(build().cuda(), device_ids=[0])
    train_one_epoch(model, loader, optimizer, args=args)

if __name__ == "__main__":
    main()
"""


def test_ddp021_reads_the_accumulation_count_of_a_helper_from_the_parser_of_the_script_importing_it(tmp_path, run):
    """The engine module reads `args.accum_iter` of the namespace the script that imports it
    parsed: its default of 1, which no launch changes, accumulates nothing."""
    files = {"engine.py": ENGINE, "main.py": SCRIPT_WITH_ENGINE}
    accumulation_flagged_only_when_raised(tmp_path, run, files, "main.py", "--accum_iter", "engine.py:8:9: DDP021")


ENGINE_WITH_PARAMETER = """
def train(model, loader, optimizer, accum_steps=1):
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if step % accum_steps == 0:
            optimizer.step()
"""

SCRIPT_PASSING_THE_OPTION = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from engine import train
from opts import *

def main():
    args = parse_args()
    torch.distributed.init_process_group("nccl")
    model = DDP(build().cuda(), device_ids=[0])
    train(model, loader, optimizer, accum_steps=args.accum_steps)

if __name__ == "__main__":
    main()
"""


def test_ddp021_reads_a_count_parameter_from_the_option_a_call_of_another_module_passes(tmp_path, run):
    """The engine's `accum_steps` is what the script's call passes: `args.accum_steps` of the
    parser the script imports everything from (`from opts import *`), left at 1 by every launch."""
    parser = 'import argparse\ndef parse_args():\n    p = argparse.ArgumentParser()\n    p.add_argument("--accum_steps", type=int, default=1)\n    return p.parse_args()\n'
    files = {"opts.py": parser, "engine.py": ENGINE_WITH_PARAMETER, "main.py": SCRIPT_PASSING_THE_OPTION}
    accumulation_flagged_only_when_raised(tmp_path, run, files, "main.py", "--accum_steps", "engine.py:5:9: DDP021")


CONFIG_PARSER = """
def get_args_parser(sub):
    sub.add_argument("--grad_accum", default=False, type=bool)
    sub.add_argument("--accum_step", default=1, type=int)
"""

SWITCHED_ENGINE = """
def train_one_epoch(model, loader, optimizer, args):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        if args.grad_accum:
            loss = loss / args.accum_step
            loss.backward()
            if (i + 1) % args.accum_step == 0:
                optimizer.step()
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""

# main.py picks a config module's parser inside an `if` and imports it there
PICKED_CONFIG = """    parser = argparse.ArgumentParser()
    subparser = parser.add_subparsers(dest="config")
    if parser.parse_known_args()[-1][0] == "cifar":
        from configs.cifar import get_args_parser
        get_args_parser(subparser.add_parser("cifar"))
    args = parser.parse_args()
"""


def test_ddp021_reads_options_of_a_config_parser_imported_inside_a_branch(tmp_path, run):
    """The script imports the config module that declares the options inside the `if` that
    picks it (Project.nested_imports): `--accum_step` left at 1 accumulates nothing."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "__init__.py").write_text("")
    script = SCRIPT_OF_A_THIRD_PARSER.replace("import sys\n", "import argparse\n").replace("from params import parse_args\n", "")
    script = script.replace("    args = parse_args(sys.argv[1:])\n", PICKED_CONFIG)
    files = {"configs/cifar.py": CONFIG_PARSER, "engine.py": SWITCHED_ENGINE, "main.py": script}
    switched_engine_flagged_only_when(tmp_path, run, files, " cifar --accum_step 4 --grad_accum 1")


def test_ddp021_silent_when_the_accumulation_switch_is_off_in_every_run(tmp_path, run):
    """`if args.grad_accum:` of an option that defaults to False and that no launch passes:
    the accumulating branch never runs, whatever the count (ParserOptions.never_runs)."""
    parser = 'import argparse\ndef parse_args():\n    p = argparse.ArgumentParser()\n    p.add_argument("--grad_accum", action="store_true")\n    p.add_argument("--accum_step", type=int, default=4)\n    return p.parse_args()\n'
    script = SCRIPT_PASSING_THE_OPTION.replace("from engine import train", "from engine import train_one_epoch").replace(
        "train(model, loader, optimizer, accum_steps=args.accum_steps)", "train_one_epoch(model, loader, optimizer, args)"
    )
    switched_engine_flagged_only_when(tmp_path, run, {"opts.py": parser, "engine.py": SWITCHED_ENGINE, "main.py": script}, " --grad_accum")


def switched_engine_flagged_only_when(tmp_path, run, files, options):
    """Write `files`; launch main.py without options, then with `options`: only then does
    SWITCHED_ENGINE accumulate, and only then is its backward reported."""
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run.cwd = tmp_path
    for passed, flagged in (("", False), (options, True)):
        (tmp_path / "run.sh").write_text(f"torchrun --nproc_per_node=4 main.py{passed}\n")
        output = run("check", "--no-cache", "--select", "DDP021", ".").stdout
        assert ("engine.py:7:13: DDP021" in output) is flagged, (passed, output)


PARSER_FILLING_UNSET = """
import argparse

class ParseKwargs(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, dict(v.split("=") for v in values))

def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum-freq", type=int, default=1)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--model-kwargs", nargs="*", action=ParseKwargs, default={})
    args = parser.parse_args(argv)
    for name, val in {"lr": 5e-4}.items():
        if getattr(args, name) is None:
            setattr(args, name, val)
    return args
"""

ENGINE_SWITCHING_ON_THE_COUNT = """
def train_one_epoch(model, loader, optimizer, args):
    for i, batch in enumerate(loader):
        if args.accum_freq == 1:
            model(batch).sum().backward()
        else:
            for j in range(args.accum_freq):
                model(batch[j]).sum().backward()
        optimizer.step()
"""

SCRIPT_OF_A_THIRD_PARSER = """
import sys
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from params import parse_args
from engine import train_one_epoch

def main():
    args = parse_args(sys.argv[1:])
    torch.distributed.init_process_group("nccl")
    model = DDP(build().cuda(), device_ids=[0])
    train_one_epoch(model, loader, optimizer, args)

if __name__ == "__main__":
    main()
"""


def test_ddp021_reads_the_count_of_a_helper_from_the_parser_module_its_importer_imports(tmp_path, run):
    """The engine reads `args.accum_freq` of the namespace main.py hands it, which params.py's
    parser built; params.py sets options by name only where they are None (and an Action its own
    option), which leaves `--accum-freq`'s default of 1 as it is."""
    files = {"params.py": PARSER_FILLING_UNSET, "engine.py": ENGINE_SWITCHING_ON_THE_COUNT, "main.py": SCRIPT_OF_A_THIRD_PARSER}
    accumulation_flagged_only_when_raised(tmp_path, run, files, "main.py", "--accum-freq", "engine.py:8:17: DDP021")


def test_a_string_option_typed_str_keeps_its_default_and_an_object_setting_itself_is_no_namespace():
    found = options(
        """
        parser.add_argument("--dist_url", type=str, default="tcp://127.0.0.1:23456")
        parser.add_argument("--size", type=int, default="3")

        class Engine:
            def __init__(self, **kwargs):
                for k, v in kwargs.items():
                    setattr(self, k, v)
        """
    )
    assert found.documented(cst.parse_expression("args.dist_url")) == "tcp://127.0.0.1:23456"
    assert found.default_for(cst.parse_expression("args.size")) is None  # argparse converts it
    assert holds(options("setattr(args, 'seed', 3)\n"), "args.seed is not None") is None



SWITCHED = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from opts import parse_args

args = parse_args()


class Trainer:
    def __init__(self, model):
        self.args = args
        self.model = model.cuda()
        if self.args.use_ddp:
            self.model = DDP(self.model, device_ids=[0])

    def save(self):
        if self.args.use_ddp:
            torch.save(self.model.state_dict(), "model.pth")
        if args.resume:
            self.model.load_state_dict(torch.load(args.resume)); self.optimizer.load_state_dict(torch.load(args.resume + ".opt"))


def main():
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl")
    Trainer(torch.nn.Linear(2, 2)).save()
    if args.use_ddp and args.save_state:
        torch.save(torch.zeros(1).cuda(), "state.pth")


if __name__ == "__main__":
    main()
"""


def test_code_under_a_distributed_switch_no_documented_run_turns_on_gives_no_finding(tmp_path, run):
    """AudioMAE trains on several GPUs only under `--use_ddp`, which no script passes: no
    documented run has a second process there, so a save under `if self.args.use_ddp:` is not
    a race of ranks (also in a method, through `self.args`, and under `and`). A run passing the
    switch, or a document telling the user to, brings the findings back; so does a switch that
    starts the script's own process group (`if args.use_ddp: dist.init_process_group(...)`, a
    distributed mode of its own, Project.distributed_modes: OpenLTM's --ddp, VL-T5's
    --distributed): it is there to be passed. `--resume PATH`, left out by every command shown,
    is there to be passed too: its branch resumes a training (it restores the model and its
    optimizer), which every stopped and restarted run does."""
    parser = (
        'import argparse\ndef parse_args():\n    p = argparse.ArgumentParser()\n'
        '    p.add_argument("--use_ddp", action="store_true")\n'
        '    p.add_argument("--save_state", action="store_true")\n'
        '    p.add_argument("--resume", default="")\n'
        '    return p.parse_args()\n'
    )
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "opts.py").write_text(parser)
    (tmp_path / "train.py").write_text(SWITCHED)
    run.cwd = tmp_path
    saves = ("train.py:20:", "train.py:30:")
    for script, readme, flagged in (
        ("", "", False),
        (" --use_ddp --save_state", "", True),
        ("", "Add `--use_ddp` to train on every GPU of the machine, and `--save_state` to keep its state.\n", True),
    ):
        (tmp_path / "run.sh").write_text(f"torchrun --nproc_per_node=4 train.py{script}\n")
        (tmp_path / "README.md").write_text(readme)
        output = run("check", "--no-cache", "--select", "DDP004,DDP014", ".").stdout
        assert all((line in output) is flagged for line in saves), (script, readme, output)
        assert "train.py:22:" in output  # the resume load: `--resume` is to be passed
    (tmp_path / "train.py").write_text(SWITCHED.replace('"WORLD_SIZE" in os.environ', "args.use_ddp"))
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=4 train.py\n")
    (tmp_path / "README.md").write_text("")
    output = run("check", "--no-cache", "--select", "DDP004,DDP014", ".").stdout
    # `--save_state`, which no run passes and no document names, keeps its default there
    assert "train.py:20:" in output and "train.py:30:" not in output, output


# An attribute set by a name the code spells out is that one attribute: a layer patched with
# `setattr(layer, "forward", fn)` leaves every option as parsed, and a loop over a literal list
# of names (`for name in ["lr", "epochs"]: setattr(args, name, saved)`) rebinds those alone.
NAMED_SETATTRS = """
def patch(model, fn):
    for layer in model.modules():
        setattr(layer, "forward_fast", fn)

def restore(args, saved):
    kept = ("name", "resume")
    for key in ["accum_steps", "ema"]:
        setattr(args, key, getattr(saved, key))
    for key in kept:
        setattr(args, key, getattr(saved, key))
"""


def test_an_attribute_set_by_a_spelled_out_name_rebinds_that_name_alone(tmp_path):
    for found in (options(NAMED_SETATTRS), imported_options(tmp_path, SCRIPT, OPTS + NAMED_SETATTRS)):
        assert found.default_for(cst.parse_expression("args.workers")) == 0
        assert holds(found, "args.seed is not None") is False
        assert found.default_for(cst.parse_expression("args.accum_steps")) is None  # the loop sets it
        assert holds(found, "not args.ema") is None
        assert holds(found, "args.resume") is None  # through a name bound to the list
    assert holds(options("setattr(layer, 'seed', 3)\n"), "args.seed is not None") is None  # a name it may set
    unknown = (
        "for key in keys:\n    setattr(args, key, 1)\n",
        "for key in ['accum_steps']:\n    key = other\n    setattr(args, key, 1)\n",
        "for key in ['accum_steps']:\n    def f(key):\n        setattr(args, key, 1)\n",
    )
    for index, code in enumerate(unknown):
        folder = tmp_path / str(index)
        folder.mkdir()
        for found in (options(code), imported_options(folder, SCRIPT, OPTS + code)):
            assert found.default_for(cst.parse_expression("args.workers")) is None, code


PATCHING_SCRIPT = """
import argparse
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed

def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=0)
    return parser.parse_args()

def enable_fast_attention(model, fn):
    for layer in model.modules():
        setattr(layer, "attention_fn", fn)

def main(args):
    accelerator = Accelerator()
    if args.seed is not None:
        set_seed(args.seed)
    loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=args.workers, collate_fn=lambda b: stack(b, args))
    for batch in loader:
        noise = torch.randn_like(batch)

if __name__ == "__main__":
    main(parse_args())
"""


def test_a_layer_patched_by_name_leaves_the_options_defaults_read(tmp_path, run):
    """`setattr(layer, "attention_fn", fn)` sets no option: `--workers` left at 0 starts no
    worker to pickle the lambda (DDP016); a launch passing it brings the finding back."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(PATCHING_SCRIPT)
    run.cwd = tmp_path
    for passed, flagged in (("", False), (" --workers 4 --seed 1", True)):
        (tmp_path / "run.sh").write_text(f"accelerate launch --multi_gpu --num_processes 2 train.py{passed}\n")
        output = run("check", "--no-cache", "--select", "DDP016", ".").stdout
        assert ("train.py:21:99: DDP016" in output) is flagged, (passed, output)
