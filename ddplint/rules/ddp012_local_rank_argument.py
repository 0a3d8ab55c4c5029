from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import keyword_argument, positional_arguments, with_keyword_argument
from ddplint.analyses.ranks import environment_key, strip_int
from ddplint.core.lines import split_lines
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.prefilter.triggers import CallTrigger
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import ARGUMENT_PARSER, LAUNCHERS, LOCAL_RANK_VARIABLES, OLD_LAUNCHER, OLD_LAUNCHER_MODULE, SPAWN, START_PROCESSES
from ddplint.core.diagnostics import StepKind
from ddplint.analyses.pickling import is_process_start, started_function
from ddplint.model.records import LaunchCommand, Place
from ddplint.prefilter.screens import dotted, walk
from ddplint.semantic.walk import children, descendants, positions

_ENVIRONMENT_DEFAULT = 'os.environ.get("LOCAL_RANK")'
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})
SYS_ARGV = "sys.argv"
HYDRA_MAIN = "hydra.main"
# absl's flag definitions a `local_rank` flag is declared with (`flags.DEFINE_integer("local_rank", 0, ...)`)
ABSL_DEFINES = frozenset(f"absl.flags.DEFINE_{kind}" for kind in ("integer", "string", "enum"))
_ABSL = ("absl",)  # the one parser of absl's flags
ABSL_MESSAGE = (
    "absl flag local_rank only: torchrun passes no flag (it sets LOCAL_RANK) and newer launchers pass --local-rank, "
    "an unknown flag; default it to int(os.environ.get(\"LOCAL_RANK\", 0)) and launch with torchrun"
)
UNDECLARED_MESSAGE = (
    "this parser declares neither --local-rank nor --local_rank, and torch.distributed.launch (without --use_env) "
    "appends one to every process: parse_args exits with 'unrecognized arguments' on every rank; launch with "
    "torchrun, or declare --local-rank and --local_rank"
)
# What a parser of this file may do without adding an option nobody sees: the rest
# (`add_subparsers`, `parse_known_args`, `register`) leaves its options unknown here.
_PARSER_METHODS = frozenset({
    "add_argument", "add_argument_group", "add_mutually_exclusive_group", "parse_args", "set_defaults",
    "print_help", "print_usage", "format_help", "format_usage", "error", "exit", "get_default",
})
# Parser settings under which `--local-rank=N` may not be an unknown option (a parent's options,
# other prefix characters, arguments read from files).
_PARSER_SETTINGS = frozenset({"parents", "prefix_chars", "fromfile_prefix_chars"})
REJECTED_MESSAGE = (
    "--local_rank only: torch.distributed.launch (without --use_env) passes --local-rank=N since PyTorch 2.0, "
    "which this parser rejects ('unrecognized arguments') on every rank; accept --local-rank and default to the "
    "LOCAL_RANK environment variable"
)
HYDRA_MESSAGE = (
    "the launcher's --local-rank=N becomes the hydra override local-rank=N, no key of the config, and hydra stops; "
    "map local-rank to local_rank here (or read LOCAL_RANK)"
)


# Where a file's text runs torch.distributed.launch, not only names it: `python -m torch.distributed.launch`
# (also `"-m", "torch.distributed.launch"` in an argument list) or the launcher followed by its options.
_RUNS_OLD_LAUNCHER = re.compile(
    rf"-m['\"]?(?:\s*,)?\s*['\"]?{OLD_LAUNCHER.pattern}|{OLD_LAUNCHER.pattern}['\"]?(?:\s*,)?[ \t]*['\"]?--?[a-z]"
)
# A command that passes the option itself: `--local_rank 3`, `--local_rank=$gpu_id`.
_PASSES_OPTION = re.compile(r"(?<![\w-])--local[_-]rank(?:=|[ \t]+)(?!-)\S")
_REJECTED_HARM = "the parser rejects --local-rank=N: unrecognized arguments, every rank stops"
# argparse's parse_known_args returns the options it does not know with the extras, and stops
# nothing (Python 3.10-3.14 argparse): the launcher's `--local-rank=N` is set aside there.
SET_ASIDE_MESSAGE = (
    "--local_rank only: torch.distributed.launch (without --use_env) passes --local-rank=N since PyTorch 2.0, "
    "which parse_known_args sets aside: {harm}; accept --local-rank and default to the LOCAL_RANK environment variable"
)
_SET_ASIDE_READ = "local_rank keeps its default on every rank, where the code reads it (every rank takes the same device)"
# argparse's default without `default=` is None: a device or rank read from it is None on every rank.
_SET_ASIDE_NONE = "local_rank is None on every rank, where the code reads it (as a device or a rank it fails or means none)"
_SET_ASIDE_REQUIRED = "the required --local_rank is missing, and the parser stops every rank"
_SET_ASIDE = "with --local-rank=N set aside by parse_known_args"
SET_ASIDE_READ_MESSAGE = (
    "--local_rank only: torch.distributed.launch (without --use_env) passes --local-rank=N since PyTorch 2.0, "
    "which parse_known_args sets aside: local_rank keeps its default on every rank, where the code reads it (every "
    "rank takes the same device); accept --local-rank and default to the LOCAL_RANK environment variable"
)
_LOG_LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


def _reports(name: str | None) -> bool:
    """Whether a call of this dotted name only shows its arguments (`print`, `logger.info`): a
    `local_rank` read there steers nothing, so its staying at the default harms nothing."""
    if name is None:
        return False
    receiver, _, method = name.rpartition(".")
    return name in ("print", "pprint", "pprint.pprint", "tqdm.write") or (method in _LOG_LEVELS and "log" in receiver.lower())


def _never_read(name: str, source: str) -> bool:
    """Whether every mention of `name` in `source` binds it as the last name of a tuple target
    (`args, unknown = ...`, again for a second parser): what it holds is never read."""
    mentions = len(re.findall(rf"\b{re.escape(name)}\b", source))
    return mentions == len(re.findall(rf",\s*{re.escape(name)}\s*\)?\s*=(?!=)", source))


def _option_strings(call: cst.Call) -> list[str]:
    return [
        arg.value.evaluated_value  # type: ignore[misc]
        for arg in positional_arguments(call)
        if isinstance(arg.value, cst.SimpleString)
    ]


_ENVIRONMENT_SETDEFAULT = ("os.environ.setdefault", "environ.setdefault")


def literal_string(expr: cst.BaseExpression) -> str | None:
    return expr.evaluated_value if isinstance(expr, cst.SimpleString) else None  # type: ignore[return-value]


def _fills_missing_local_rank(assign: cst.Assign, around: cst.If | None) -> bool:
    """`os.environ["LOCAL_RANK"] = ...` directly under `if "LOCAL_RANK" not in os.environ:`:
    written only where no launcher set the variable."""
    if len(assign.targets) != 1 or environment_key(assign.targets[0].target) != "LOCAL_RANK" or around is None:
        return False
    test = around.test
    missing = (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.NotIn)
        and literal_string(test.left) == "LOCAL_RANK" and dotted_name(test.comparisons[0].comparator) in ("os.environ", "environ")
    )
    body = around.body.body
    return missing and any(isinstance(line, cst.SimpleStatementLine) and assign in line.body for line in body)


def _with_environment_fallback(default: cst.BaseExpression | None, quote: str = '"') -> cst.BaseExpression:
    call = cst.parse_expression(_ENVIRONMENT_DEFAULT.replace('"', quote))
    assert isinstance(call, cst.Call)
    if default is None or isinstance(default, cst.Name) and default.value == "None":
        return call  # os.environ.get's own default is None
    fallback = cst.Arg(value=default)
    return call.with_changes(args=[call.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), fallback])


def _without(args: list[cst.Arg], dropped: cst.Arg) -> list[cst.Arg]:
    index = args.index(dropped)
    kept = args[:index] + args[index + 1 :]
    if index == len(args) - 1 and kept:
        # The new last argument takes the dropped one's comma (a trailing comma, a newline).
        kept[-1] = kept[-1].with_changes(comma=dropped.comma)
    return kept


_COMMON_LINE_LENGTHS = (79, 88, 99, 100, 119, 120)


def _line_length(lines: list[str]) -> int | None:
    """The line length a file keeps to: the smallest common limit its longest line is within."""
    longest = max((len(line) for line in lines), default=0)
    return next((limit for limit in _COMMON_LINE_LENGTHS if longest <= limit), None)


class LocalRankArgument(Rule):
    """
    Scripts written for the old `python -m torch.distributed.launch` declare
    `parser.add_argument("--local_rank", ...)`, because that launcher appended
    `--local_rank=N` to every process's command line. It no longer does so reliably:
    torchrun (PyTorch >= 1.10) passes no option at all and sets the `LOCAL_RANK` environment
    variable instead, and `torch.distributed.launch` since PyTorch 2.0 passes `--local-rank=N`
    with a hyphen, which such a parser rejects ("unrecognized arguments: --local-rank=0").
    Under torchrun the value silently stays at its default, so every process uses GPU 0
    (or `required=True` stops every rank at start).

    Fires when a parser accepts `--local_rank` but not `--local-rank`, nothing else gives
    the argument torchrun's value, and the launcher that starts the script breaks it. The
    finding's chain names that launcher and, where it matters, where the value is read.

    Flagged: an `add_argument` call whose option strings include `--local_rank` but not
    `--local-rank`, or an absl flag `flags.DEFINE_integer("local_rank", ...)` (absl rejects
    `--local-rank=N` as an unknown flag; reported without a fix), when no other `add_argument`
    of the same parser (or of a group of it) declares `--local-rank` and the default does not
    read `LOCAL_RANK` already (`default=int(os.environ.get("LOCAL_RANK", 0))` works under
    torchrun; such a parser is flagged only where a command of the project runs the script
    with torch.distributed.launch without `--use_env`, whose `--local-rank=N` it rejects
    whatever its default), and one of:
    - `python -m torch.distributed.launch` (without `--use_env`) launches the script: a shell
      script, document or notebook (its `!` commands) of the project (also in a hidden folder
      inside a package, `mmdet/.mim/tools/`) runs this script, or one
      that imports it, with it, also through a shell script of the project whose launch takes
      the script from its arguments (`bash tools/dist_run.sh tools/x.py 8`) (a
      path that ends the script's own from anywhere, a bare file name from the script's
      folder, above it or a folder inside it such as `docs/` or `scripts/stage1/` where no
      folder between holds a file of that name; after a `cd` to a folder of the project,
      `cd /home/me/repo/BMB_IMG` or `cd "$(dirname "$0")"/..`, the file the path names from
      there and no other; a command broken over two
      lines of a document without a backslash counts; the message names the line), or the
      file runs it in a command (`-m torch.distributed.launch`, or the launcher followed by
      its options: a usage line, a comment, a command it builds), or names it at all where the
      project documents no run of the script (a help text "for torch.distributed.launch") or
      launches with it a script it does not name (`{script name & parameters}`; beside
      documented runs with other launchers, such prose, `# jobs started with
      torch.distributed.launch` in a script every slurm script starts with `srun`, runs
      nothing). Since PyTorch 2.0 that
      launcher passes `--local-rank=N` and the parser exits ("unrecognized arguments"), read
      or not (the message then names that launcher, not torchrun). Where the file parses only with `parse_known_args` and drops the extras
      (`args, _ = parser.parse_known_args()`, `[0]`, a name never read: only bound, once or again
      by a second parse; the parser not returned from its function), `--local-rank=N` is set
      aside instead: flagged only as below, when the option is `required=True` or its value is
      read, and the message says so (the option keeps its default on every rank);
    - a launcher that passes no option starts it, torchrun as the project documents it or a
      launcher the project does not name where the code shows that ranks run it (the file,
      or a script that imports it, forms a process group or reads RANK; a module that is
      no script imports torch.distributed: Rule.runs_link; not a script in a test folder,
      `apex/tests/L0/test_dist_adam.py`, that no command of the project runs: a test runner
      imports it as one process, and nothing shows a launch), and the option is `required=True`
      (every rank stops at parsing), or a parsed
      `local_rank` is read (`args.local_rank`, `getattr(args, "local_rank")`, `FLAGS.local_rank`;
      not a read only printed or logged: `print(args.local_rank)`, `logger.info(...)`),
      in this file or in a script that imports it (a parser in `config.py`, read in
      `train.py`: the message names the read), and none of them sets it from `LOCAL_RANK`
      (`args.local_rank = int(os.environ["LOCAL_RANK"])`, also through
      `os.environ.get("LOCAL_RANK", args.local_rank)`): it keeps its default on every rank. A
      read that only fills `LOCAL_RANK` where it is unset (`if "LOCAL_RANK" not in os.environ:
      os.environ["LOCAL_RANK"] = str(args.local_rank)`, `os.environ.setdefault(...)`) is no
      such read: the launcher's own value wins. Nor, where the default is None (argparse's
      "not passed"), a read that tests it against None (`if args.local_rank is not None:`,
      `ds = args.local_rank is None`) or sits in the branch such a test guards: under torchrun
      the code takes its branch for "not passed", and no rank takes the default as a device
      (sockeye's DeepSpeed switch, the device from `LOCAL_RANK`); still flagged where a branch
      so guarded has no else and neither the scripts nor a project module they import read
      `LOCAL_RANK` (the branch is the only place a device is chosen).
    A method called `local_rank` (`hvd.local_rank()`), an object's own `self.local_rank`
    and an attribute of a library's object (`job_env.local_rank` of `submitit.JobEnvironment()`)
    or module (`idr_torch.local_rank` after `import idr_torch`) are not reads of the option. In a document, where inline code runs a script with a
    launcher, only the code spans are commands (a launcher named in the prose launches nothing).
    Not flagged otherwise: an option nothing reads, or that is set from `LOCAL_RANK`, is
    harmless under torchrun (it keeps its default and nothing notices); nor an option alone in
    a script that no command of the project launches and that forms no process group (a
    one-process visualiser on `cuda:{args.local_rank}`): no launcher's option is missed. Nothing passes the
    option, and nothing is flagged, where the project launches the script only with launchers
    that pass none and set no `LOCAL_RANK` (SLURM's `srun`, `horovodrun`, `mpirun`), where it
    calls Horovod, where the code sets the parsed local_rank itself from another launcher's
    variable (`params.local_rank = int(os.environ["SLURM_LOCALID"])`, in the scripts or a
    project module they import, FiD's `src/slurm.py`) and no command of the project runs it with
    torchrun, torch.distributed.launch or another launcher that sets `LOCAL_RANK` or passes an
    option (its multi-process run is that launcher's), and where it starts its processes itself and sets the parsed local_rank
    itself (`args.local_rank = rank` before each `Process(...)`), in this file or in a project
    module its scripts import (tape's `launch_process_group`), or starts them itself
    (`mp.spawn(worker, ...)`) and no command of the project launches it: each process runs
    the function it is handed, and no launcher's option is missed. Nor where the project runs
    the script only with plain `python` runs, each passing the option itself (eva's
    `CUDA_VISIBLE_DEVICES=$gpu_id python src/generate.py --local_rank $gpu_id`, one process per
    GPU, the option its shard's index): no launcher starts it. Nor in a script that runs as one
    process in every documented run (ProjectView.single_process): no document launches it, only
    such scripts import it, and the project runs it with `python script.py` or it starts its own
    process group of one (`init_process_group(..., world_size=1)`), or every command that runs it
    is torchrun or torch.distributed.launch --use_env with no process or node count (`torchrun
    --master_port=29500 train.py`: torch's default of one process, whose local rank 0 the default
    matches), or it leaves itself one visible GPU at import and spawns one process per visible
    GPU (`torch.cuda.device_count()`); not where it forms a larger
    group under a switch that an option off unless passed (`if args.ddp:`) or a config file
    the project ships (`if cfg.DISTRIBUTED:`, `DISTRIBUTED: true`) turns on: a run with it is
    several ranks (Project.distributed_modes). Files that call DeepSpeed
    (`deepspeed.initialize`, `deepspeed.add_config_arguments`), or that the project launches
    with `deepspeed train.py`, are flagged only where the project documents launching them with
    `torch.distributed.launch`: DeepSpeed's own launcher passes `--local_rank=N`.
    A parser that declares neither spelling is flagged at its `parse_args()` where
    torch.distributed.launch without `--use_env` starts the script itself (a command of the
    project, or the file names that launcher and neither `--use_env` nor torchrun): the launcher
    appends `--local-rank=N` (`--local_rank=N` before PyTorch 2.0) and `parse_args` exits with
    "unrecognized arguments" on every rank. Only a parser made here
    (`argparse.ArgumentParser(...)`, no `parents=`) whose options are all literal and known:
    not where it is handed to a helper (`add_args(parser)`), has subparsers or an option that
    takes what is left (`nargs=argparse.REMAINDER`), an option starting `--local`, is parsed
    with `parse_known_args` or from other arguments (`parse_args(sys.argv[2:])`), is returned,
    or the file reads `sys.argv` itself. No fix there: launch with torchrun, or declare the option.
    A hydra script (`@hydra.main(config_path=..., config_name=...)`) that turns its
    `--key=value` arguments into overrides `key=value` (a loop over `sys.argv` that drops the
    dashes of what `startswith("--")`), whose config declares `local_rank` and which
    torch.distributed.launch starts (as above), is flagged at that test: the launcher's
    `--local-rank=N` becomes `local-rank=N`, no key of the config, and hydra stops every rank.
    No fix there: map `local-rank` to `local_rank` in the loop, or read `LOCAL_RANK`.
    Fix (safe): add `"--local-rank"` as the first option string. argparse takes `dest` from
    the first long option with `-` turned into `_`, so it is still `args.local_rank`, and both
    spellings are accepted. The default becomes `os.environ.get("LOCAL_RANK", <old
    default>)`, so torchrun's value is used when no option is passed; argparse runs `type=`
    on string defaults, so `type=int` still gives an int, and with `LOCAL_RANK` unset the
    default is what it was. `required=True` is dropped with it: under torchrun it stopped every
    rank (without the option and without `LOCAL_RANK` the value is now the default, None).
    A default that already reads `LOCAL_RANK` is left alone, and so is a `required=` that is
    not a literal. A call that would pass the file's line length (the smallest of 79, 88, 99,
    100, 119, 120 that its longest line keeps within) is wrapped as black wraps it.
    """

    code = "DDP012"
    needs_ranks = True
    name = "local-rank-argument"
    frameworks = (Framework.DDP, Framework.DEEPSPEED)
    message = (
        "--local_rank only: torchrun passes no option (it sets LOCAL_RANK) and newer launchers pass "
        "--local-rank; accept --local-rank and default to the LOCAL_RANK environment variable"
    )
    fix = Applicability.SAFE
    # `also`: the option it flags (`--local_rank`, `-local_rank`), an absl flag's name, or a hydra
    # script (whose options are rewritten in a loop: `arg.startswith("--")`).
    trigger = CallTrigger(
        methods=("add_argument", "DEFINE_integer", "DEFINE_string", "DEFINE_enum", "startswith", "parse_args"),
        also=(("-local_rank", '"local_rank"', "'local_rank'", "hydra", "parse_args"),),
    )

    flagged_examples = (
        Flagged(
            """
            import argparse
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            ^
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            torch.distributed.init_process_group("nccl")
            """,
            fixed="""
            import argparse
            import os
            import torch
            parser = argparse.ArgumentParser()
            parser.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", -1),
            )
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            torch.distributed.init_process_group("nccl")
            """,
        ),
        Flagged(
            # Written into LOCAL_RANK whether or not a launcher set it: torchrun's value is
            # overwritten by the option's default on every rank.
            """
            import argparse
            import os
            import torch

            def parse_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                ^
                args = parser.parse_args()
                os.environ["LOCAL_RANK"] = str(args.local_rank)
                return args
            """,
            fix_edits=((
                'parser.add_argument("--local_rank", type=int, default=0)',
                'parser.add_argument(\n        "--local-rank",\n        "--local_rank",\n        type=int,\n        default=os.environ.get("LOCAL_RANK", 0),\n    )',
            ),),
        ),
        Flagged(
            # required=True stops every rank under torchrun, whether or not the value is read (a
            # module that imports torch.distributed: the scripts that call it run as ranks).
            """
            import torch.distributed
            def make_parser():
                parser = argparse.ArgumentParser(description='training')
                parser.add_argument('--local_rank', type=int, required=True)
                ^
                return parser.parse_args()
            """,
            fixed="""
            import os

            import torch.distributed
            def make_parser():
                parser = argparse.ArgumentParser(description='training')
                parser.add_argument(
                    '--local-rank',
                    '--local_rank',
                    type=int,
                    default=os.environ.get('LOCAL_RANK'),
                )
                return parser.parse_args()
            """,
        ),
        Flagged(
            """
            import os
            import torch.distributed
            group = parser.add_argument_group("distributed")
            group.add_argument(
            ^
                "--local_rank",
                type=int,
                help="set by the launcher",
            )
            device = getattr(parser.parse_args(), "local_rank")
            """,
            fixed="""
            import os
            import torch.distributed
            group = parser.add_argument_group("distributed")
            group.add_argument(
                "--local-rank", "--local_rank",
                type=int,
                help="set by the launcher",
                default=os.environ.get("LOCAL_RANK"),
            )
            device = getattr(parser.parse_args(), "local_rank")
            """,
        ),
        Flagged(
            # `--local-rank` on another parser does not help this one.
            """
            import argparse
            import os
            import torch.distributed
            train = argparse.ArgumentParser()
            train.add_argument("--local-rank", type=int, default=0)
            evaluate = argparse.ArgumentParser()
            evaluate.add_argument("--local_rank", type=int, default=0)
            ^
            rank = evaluate.parse_args().local_rank
            """,
            fixed="""
            import argparse
            import os
            import torch.distributed
            train = argparse.ArgumentParser()
            train.add_argument("--local-rank", type=int, default=0)
            evaluate = argparse.ArgumentParser()
            evaluate.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", 0),
            )
            rank = evaluate.parse_args().local_rank
            """,
        ),
        Flagged(
            # Lines run to 119 columns here: the fixed call stays on one line; required=True goes.
            """
            import argparse
            import os
            import torch.distributed

            parser = argparse.ArgumentParser(description="lines here run past a hundred columns: the fixed call stays on one line")
            parser.add_argument("--local_rank", type=int, default=-1, required=True)
            ^
            """,
            fixed="""
            import argparse
            import os
            import torch.distributed

            parser = argparse.ArgumentParser(description="lines here run past a hundred columns: the fixed call stays on one line")
            parser.add_argument("--local-rank", "--local_rank", type=int, default=os.environ.get("LOCAL_RANK", -1))
            """,
        ),
        Flagged(
            # Never read, but the file documents the old launcher, which passes --local-rank.
            """
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0, help="ignored")
            ^
            args = parser.parse_args()
            rank = int(os.environ["LOCAL_RANK"])
            """,
            fixed="""
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os

            parser = argparse.ArgumentParser()
            parser.add_argument(
                "--local-rank",
                "--local_rank",
                type=int,
                default=os.environ.get("LOCAL_RANK", 0),
                help="ignored",
            )
            args = parser.parse_args()
            rank = int(os.environ["LOCAL_RANK"])
            """,
            messages=REJECTED_MESSAGE,
        ),
        Flagged(
            # parse_known_args sets the launcher's --local-rank=0 aside, and the value read is -1.
            """
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=4 train.py\"\"\"
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            ^
            args, _ = parser.parse_known_args()
            torch.cuda.set_device(args.local_rank)
            """,
            fix_edits=(
                (
                    'import argparse\n',
                    'import argparse\nimport os\n',
                ),
                (
                    'parser.add_argument("--local_rank", type=int, default=-1)',
                    'parser.add_argument(\n    "--local-rank",\n    "--local_rank",\n    type=int,\n    default=os.environ.get("LOCAL_RANK", -1),\n)',
                ),
            ),
            messages=SET_ASIDE_READ_MESSAGE,
        ),
        Flagged(
            # The extras are bound to a name twice and never read: --local-rank=N is set aside, not
            # rejected, and the device every rank binds is the default's.
            """
            # python -m torch.distributed.launch --nproc_per_node=8 sample.py --steps 50
            import argparse
            import torch
            import torch.distributed as dist

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                ^
                args, rest = parser.parse_known_args()
                sampling = argparse.ArgumentParser()
                sampling.add_argument("--steps", type=int, default=50)
                sampling_args, rest = sampling.parse_known_args()
                torch.cuda.set_device(args.local_rank)
                dist.init_process_group("nccl")
            """,
            fix_edits=(
                ("import argparse\n", "import argparse\nimport os\n"),
                (
                    'parser.add_argument("--local_rank", type=int, default=0)',
                    'parser.add_argument(\n        "--local-rank",\n        "--local_rank",\n        type=int,\n        default=os.environ.get("LOCAL_RANK", 0),\n    )',
                ),
            ),
            messages=SET_ASIDE_READ_MESSAGE,
        ),
        Flagged(
            # No default: argparse stores None, so every rank hands None to set_device.
            """
            # python -m torch.distributed.launch --nproc_per_node=8 sample.py
            import argparse
            import torch
            import torch.distributed as dist

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int)
                ^
                args, _ = parser.parse_known_args()
                torch.cuda.set_device(args.local_rank)
                dist.init_process_group("nccl")
            """,
            fix_edits=(
                ("import argparse\n", "import argparse\nimport os\n"),
                (
                    'parser.add_argument("--local_rank", type=int)',
                    'parser.add_argument(\n        "--local-rank",\n        "--local_rank",\n        type=int,\n        default=os.environ.get("LOCAL_RANK"),\n    )',
                ),
            ),
            messages=SET_ASIDE_MESSAGE.format(harm=_SET_ASIDE_NONE),
        ),
        Flagged(
            # absl's flags reject `--local-rank=0` too; under torchrun FLAGS.local_rank stays 0.
            """
            from absl import app, flags
            import torch
            import torch.distributed as dist

            FLAGS = flags.FLAGS
            flags.DEFINE_integer("local_rank", 0, "set by the launcher")
            ^

            def main(argv):
                dist.init_process_group("nccl")
                torch.cuda.set_device(FLAGS.local_rank)

            if __name__ == "__main__":
                app.run(main)
            """,
            messages=(
                "absl flag local_rank only: torchrun passes no flag (it sets LOCAL_RANK) and newer launchers pass "
                "--local-rank, an unknown flag; default it to int(os.environ.get(\"LOCAL_RANK\", 0)) and launch with torchrun"
            ),
        ),
        Flagged(
            # No local-rank option at all: the launcher's --local-rank=N is an unknown argument.
            """
            \"\"\"python -m torch.distributed.launch --nproc_per_node=2 example.py --epochs 100\"\"\"
            import argparse
            import os
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--epochs", type=int, default=100)
            parser.add_argument("--lr", type=float, default=0.1)

            if __name__ == "__main__":
                args = parser.parse_args()
                       ^
                torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
                torch.distributed.init_process_group("nccl")
            """,
            messages=(
                "this parser declares neither --local-rank nor --local_rank, and torch.distributed.launch (without "
                "--use_env) appends one to every process: parse_args exits with 'unrecognized arguments' on every "
                "rank; launch with torchrun, or declare --local-rank and --local_rank (this file names "
                "torch.distributed.launch)"
            ),
        ),
        Flagged(
            # Default None, read only under `is not None`, but that branch is the only place a
            # device is chosen (no else, no LOCAL_RANK read): under torchrun no rank sets one.
            """
            import argparse
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=None)
            ^
            args = parser.parse_args()
            if args.local_rank is not None:
                torch.cuda.set_device(args.local_rank)
                dist.init_process_group("nccl")
            """,
            fix_edits=((
                'parser.add_argument("--local_rank", type=int, default=None)',
                'parser.add_argument(\n    "--local-rank",\n    "--local_rank",\n    type=int,\n    default=os.environ.get("LOCAL_RANK"),\n)',
            ), ("import argparse\n", "import argparse\nimport os\n")),
        ),
    )
    clean_examples = (
        Clean(
            # Default None as a "not passed" marker: every read tests it against None or sits in
            # the branch that test guards, and the device comes from LOCAL_RANK otherwise (the
            # `elif`): under torchrun the value is None and the torchrun branch runs.
            """
            import argparse
            import os
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=None, help="added by the deepspeed launcher")
            parser.add_argument("--dist", action="store_true")
            args = parser.parse_args()
            if args.local_rank is not None:
                assert args.local_rank == int(os.environ["LOCAL_RANK"])
                import deepspeed
            elif args.dist:
                dist.init_process_group("nccl")
            use_deepspeed = args.local_rank is not None
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
            """
        ),
        Clean(
            # The code fills the parsed local_rank from SLURM's own variable on its multi-process
            # path, and no document launches it with torchrun or torch.distributed.launch.
            """
            import argparse
            import os
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            args = parser.parse_args()
            if "SLURM_JOB_ID" in os.environ:
                args.local_rank = int(os.environ["SLURM_LOCALID"])
                dist.init_process_group("nccl", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
            torch.cuda.set_device(max(args.local_rank, 0))
            """
        ),
        Clean(
            # A one-process tool: no process group, no launch of it anywhere, only the option
            # (a visualiser on cuda:{local_rank}): no launcher's option is missed.
            """
            import argparse
            import torch

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                model = torch.load("model.pt").to(f"cuda:{args.local_rank}")
            """
        ),
        Clean(
            # Parsed with parse_known_args, or with an option that takes what is left, or from
            # other arguments than the command line: the launcher's option stops nothing.
            """
            # python -m torch.distributed.launch --nproc_per_node=2 example.py
            import argparse
            import sys

            known = argparse.ArgumentParser()
            known.add_argument("--epochs", type=int)
            args, _ = known.parse_known_args()

            rest = argparse.ArgumentParser()
            rest.add_argument("--epochs", type=int)
            rest.add_argument("overrides", nargs=argparse.REMAINDER)
            opts = rest.parse_args()

            given = argparse.ArgumentParser()
            given.add_argument("--epochs", type=int)
            cfg = given.parse_args(sys.argv[2:])
            """
        ),
        Clean(
            # Run with --use_env (or torchrun): the launcher appends no option, LOCAL_RANK is set.
            """
            # python -m torch.distributed.launch --use_env --nproc_per_node=2 example.py
            import argparse
            import os

            parser = argparse.ArgumentParser()
            parser.add_argument("--epochs", type=int)
            args = parser.parse_args()
            local_rank = int(os.environ["LOCAL_RANK"])
            """
        ),
        Clean(
            # Options added by a helper of the parser: what it declares is not known here.
            """
            # python -m torch.distributed.launch --nproc_per_node=2 example.py
            import argparse
            from options import add_distributed_arguments

            parser = argparse.ArgumentParser()
            parser.add_argument("--epochs", type=int)
            add_distributed_arguments(parser)
            args = parser.parse_args()
            """
        ),
        Clean(
            # It starts its own processes and nothing launches it: each runs `worker`, not the parser.
            """
            import argparse
            import torch
            import torch.multiprocessing as mp

            def worker(gpu, args):
                torch.cuda.set_device(gpu)
                verbose = args.local_rank == 0

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                mp.spawn(worker, nprocs=2, args=(args,))
            """
        ),
        Clean(
            # A process group of one, which no document launches: one process, no launcher.
            """
            import argparse
            import torch
            import torch.distributed as dist

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", world_size=1, rank=0)
                torch.cuda.set_device(args.local_rank)
            """
        ),
        Clean(
            # Horovod starts the ranks and passes no option; `hvd.local_rank()` is not the option.
            """
            import argparse
            import horovod.torch as hvd
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()
            hvd.init()
            torch.cuda.set_device(hvd.local_rank())
            """
        ),
        Clean(
            # The ranks come from a SLURM helper module: `slurm_env.local_rank` is that library's,
            # and the parsed --local_rank is never read.
            """
            import argparse
            import slurm_env
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=None)
            args = parser.parse_args()
            dist.init_process_group("nccl", rank=slurm_env.rank, world_size=slurm_env.size)
            torch.cuda.set_device(slurm_env.local_rank)
            """
        ),
        Clean(
            # Its own launcher: it sets args.local_rank before each Process it starts.
            """
            import argparse
            import torch
            import torch.distributed as dist
            from torch.multiprocessing import Process

            def run(rank, size, args):
                dist.init_process_group("nccl", init_method="tcp://127.0.0.1:6020", rank=rank, world_size=size)
                torch.cuda.set_device(args.local_rank)

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                parser.add_argument("--num_process_per_node", type=int, default=1)
                args = parser.parse_args()
                processes = []
                for rank in range(args.num_process_per_node):
                    args.local_rank = rank
                    process = Process(target=run, args=(rank, args.num_process_per_node, args))
                    process.start()
                    processes.append(process)
            """
        ),
        Clean(
            # The default already reads LOCAL_RANK: torchrun's value arrives (formerly flagged).
            """
            import os
            parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
            parser.add_argument("--local_rank", type=int, default=os.environ["LOCAL_RANK"])
            """
        ),
        Clean(
            # Both spellings declared by sibling add_argument calls of one parser (and a group of it).
            """
            import argparse

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                parser.add_argument("--local-rank", type=int, dest="local_rank")
                dist = parser.add_argument_group("distributed")
                dist.add_argument("--local_rank", type=int)
                return parser.parse_args()
            """
        ),
        Clean(
            """
            parser.add_argument("--local-rank", "--local_rank", type=int, default=0)
            parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int)
            parser.add_argument("--rank", type=int, default=0)
            """
        ),
        Clean(
            """
            import os
            local_rank = int(os.environ["LOCAL_RANK"])
            parser.add_argument("--local_rank_offset", type=int, default=0)
            """
        ),
        Clean(
            # The option is never read (the rank comes from LOCAL_RANK): torchrun leaves it
            # unset and nothing notices (formerly flagged).
            """
            \"\"\"Usage: torchrun --nproc_per_node=8 main.py\"\"\"
            import argparse
            import os
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            args = parser.parse_args()
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            """
        ),
        Clean(
            # parse_known_args sets the launcher's --local-rank=0 aside with extras nothing reads,
            # and the option is never read: the device comes from RANK.
            """
            \"\"\"Usage: python -m torch.distributed.launch --nproc_per_node=4 run.py\"\"\"
            import argparse
            import os
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int)
            args, _ = parser.parse_known_args()
            torch.cuda.set_device(int(os.environ["RANK"]) % torch.cuda.device_count())
            """
        ),
        Clean(
            # Only printed: the rank comes from the environment and the default steers nothing.
            """
            import argparse
            import os
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            args = parser.parse_args()
            rank = int(os.environ["RANK"])
            print("Local Rank: {}, Rank: {}".format(args.local_rank, rank), flush=True)
            logger.info(f"local rank {args.local_rank}")
            torch.distributed.init_process_group("nccl", rank=rank)
            """
        ),
        Clean(
            # Overwritten from LOCAL_RANK right after parsing: torchrun's value is used.
            """
            import argparse
            import os

            def parse():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                args.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
                return args

            def main():
                opts = argparse.ArgumentParser()
                opts.add_argument("--local_rank", type=int, default=-1)
                cfg = opts.parse_args()
                if "LOCAL_RANK" in os.environ:
                    cfg.local_rank = int(os.environ["LOCAL_RANK"])
                device = torch.device("cuda", cfg.local_rank)
            """
        ),
        Clean(
            # The option only fills LOCAL_RANK where no launcher set it: under torchrun the
            # variable is there and its value, not the option's default, reaches the device.
            """
            import argparse
            import os
            import torch

            def parse_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                if "LOCAL_RANK" not in os.environ:
                    os.environ["LOCAL_RANK"] = str(args.local_rank)
                os.environ.setdefault("LOCAL_RANK", str(args.local_rank))
                return args

            def main():
                args = parse_args()
                torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
                torch.distributed.init_process_group("nccl")
            """
        ),
        Clean(
            # DeepSpeed's launcher passes --local_rank=N, the spelling this parser accepts.
            """
            import argparse
            import deepspeed

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            parser = deepspeed.add_config_arguments(parser)
            args = parser.parse_args()
            torch.cuda.set_device(args.local_rank)
            engine, *_ = deepspeed.initialize(args=args, model=model)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._pending: list[tuple[cst.Call, tuple]] = []  # `--local_rank` only, with its parser
        # `--local_rank` only, whose default reads LOCAL_RANK (right under torchrun), with its parser
        self._from_environment_default: list[tuple[cst.Call, tuple]] = []
        self._hyphenated: set[tuple] = set()  # parsers that declare `--local-rank` somewhere
        self._assigned: set[int] = set()  # `x.local_rank` attributes that are assignment targets
        self._called: set[int] = set()  # `x.local_rank` attributes that are called: `hvd.local_rank()`
        self._read: cst.CSTNode | None = None  # where the file reads a parsed `local_rank` (`args.local_rank`)
        self._reporting = 0  # how many `print(...)` / `logger.info(...)` calls the visit is inside
        self._from_environment = False  # it sets `x.local_rank` from LOCAL_RANK
        self._set_itself: cst.CSTNode | None = None  # it sets `x.local_rank` from something else (`= rank`)
        self._deepspeed = False  # it calls DeepSpeed, whose launcher passes `--local_rank`
        self._horovod: cst.CSTNode | None = None  # it calls Horovod, whose launcher passes no option
        self._starts: cst.CSTNode | None = None  # it starts processes itself (spawn, Process)
        self._named: Place | cst.CSTNode | bool | None = None  # where it names torch.distributed.launch (`_named_at`)
        self._hydra: cst.Call | None = None  # `@hydra.main(config_path=..., config_name=...)`
        self._rewrite: cst.Call | None = None  # `arg.startswith("--")` in a loop over sys.argv
        self._uses: AttributeUses | None = None  # how the scripts of this parser read it (attribute_uses)
        self._filling: set[int] = set()  # the open statements that write LOCAL_RANK only where it is unset
        self._reader: Place | None = None  # where another module reads it ("train.py:40")
        self._launched_at: Place | None = None  # where the project launches it with torch.distributed.launch
        self._parses: dict[tuple, list[str | bool | None]] = {}  # per parser, how each parse treats unknown options
        self._returned: set[tuple] = set()  # parsers a function returns: parsed wherever it is called
        self._extras: dict[int, str | None] = {}  # `parse_known_args()` calls: the name their extras are bound to
        self._made: set[tuple] = set()  # parsers made here by `argparse.ArgumentParser(...)`, as `_parser` names them
        self._opaque: set[tuple] = set()  # parsers whose options are not all known here (see `_unknown_options`)
        self._local: set[tuple] = set()  # parsers with an option that starts `--local` (either spelling, an abbreviation)
        self._strict: list[tuple[cst.Call, tuple]] = []  # `parser.parse_args()`: the command line, unknown options rejected
        self._argv = False  # the file reads or rewrites sys.argv itself
        self._tested: set[int] = set()  # `x.local_rank` in `x.local_rank is None` / `is not None`
        self._guarded: set[int] = set()  # `x.local_rank` in the branch such a test guards (not None there)
        self._guarded_read: cst.CSTNode | None = None  # the first read that is such a test or in such a branch
        self._open_guard = False  # a branch guarded by `is not None` has no alternative (no else)
        self._environment_read = False  # the file reads LOCAL_RANK from the environment
        self._other_launcher: cst.CSTNode | None = None  # it sets `x.local_rank` from SLURM_LOCALID (another launcher's)

    def visit_Assign(self, node: cst.Assign) -> None:
        if _fills_missing_local_rank(node, self.model.ifs[-1] if self.model.ifs else None):
            self._filling.add(id(node))
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Name) and isinstance(node.value, cst.Call) and self.model.qualified(node.value.func) in ARGUMENT_PARSER:
            parser = (self.model.frame.key, target.value)
            settings = {arg.keyword.value for arg in node.value.args if arg.keyword is not None}
            (self._opaque if settings & _PARSER_SETTINGS or any(arg.star for arg in node.value.args) else self._made).add(parser)
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and isinstance(target.elements[1].value, cst.Name):
            self._extras[id(node.value)] = target.elements[1].value.value  # `args, unknown = parser.parse_known_args()`
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "local_rank":
                self._assigned.add(id(target.target))
                if self._reads_local_rank(node.value):
                    self._from_environment = True
                elif self._other_launcher is None and any(
                    environment_key(part) in _OTHER_LAUNCHER_VARIABLES for part in descendants(node.value)
                ):
                    self._other_launcher = node
                elif self._set_itself is None and not _mentions_local_rank(node.value):
                    self._set_itself = node

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._filling.discard(id(original_node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "argv" and not self._argv and self.model.qualified(node) == SYS_ARGV:
            self._argv = True
        if node.attr.value != "local_rank" or id(node) in self._assigned or id(node) in self._called:
            return
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            return  # an object's own attribute, set from wherever it was
        origin, view = self.model.qualified(node.value), self.model.project
        if origin is not None and view is not None and _from_library(view.program, view.module, origin):
            return  # a library module's own (`idr_torch.local_rank`), no parsed option
        if self._reporting:
            return  # only printed or logged
        if self._filling:
            return  # only fills LOCAL_RANK where no launcher set it: a launcher's value wins
        if id(node) in self._tested or id(node) in self._guarded:
            self._guarded_read = self._guarded_read or node  # whether it was passed, or where it was
            return
        self._read = self._read or node

    def visit_Comparison(self, node: cst.Comparison) -> None:
        tested = _none_tested(node)
        if tested is not None:
            self._tested.add(id(tested))

    def visit_If(self, node: cst.If) -> None:
        guard = _none_guard(node)
        if guard is None:
            return
        guarded, alternative = guard
        self._guarded.update(
            id(part) for part in descendants(guarded) if isinstance(part, cst.Attribute) and part.attr.value == "local_rank"
        )
        self._open_guard |= not alternative

    def _named_at(self) -> Place | cst.CSTNode | None:
        """Where the file runs torch.distributed.launch in a command (a usage line, a command
        in a comment, a command it builds), or names it at all where the project documents no
        run of the script (a help text "for the torch.distributed.launch utility") or launches
        with it a script it does not name (DPR's `{non distributed script name}`), or None: a
        mention in prose beside documented runs with other launchers (SSL4EO-S12's `# jobs
        started with torch.distributed.launch` in scripts its slurm scripts start with `srun`)
        shows no run. (Asked on every lint of a file with something to report: the model's
        source, not a codegen of the module, 25 % of an ibot edit in the server.)"""
        if self._named is None:
            code = self.model.source
            view = self.model.project
            found = _RUNS_OLD_LAUNCHER.search(code)
            unnamed = view is not None and any(command.launcher == OLD_LAUNCHER_MODULE for command in view.unnamed_launches())
            if found is None and (view is None or not view.runs() or unnamed):
                found = OLD_LAUNCHER.search(code)
            line = code.count("\n", 0, found.start()) + 1 if found is not None else 0
            self._named = (Place(view.path, line) if view is not None else self.model.module) if found is not None else False
        return self._named or None

    def visit_For(self, node: cst.For) -> None:
        if self._rewrite is None and self.model.qualified(node.iter) == SYS_ARGV and isinstance(node.target, cst.Name):
            self._rewrite = _option_test(node.body, node.target.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._returned.add((self.model.frame.key, dotted_name(node.value)))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._environment_read |= environment_key(node) == "LOCAL_RANK"
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0":
            self._extras[id(node.value)] = None  # `parser.parse_known_args()[0]`: the extras go nowhere

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if isinstance(node.decorator, cst.Call) and self.model.qualified(node.decorator.func) == HYDRA_MAIN:
            self._hydra = node.decorator

    def visit_Call(self, node: cst.Call) -> None:
        if _reports(dotted_name(node.func)):
            self._reporting += 1
        self._environment_read |= environment_key(node) == "LOCAL_RANK"
        if dotted_name(node.func) in _ENVIRONMENT_SETDEFAULT and node.args and literal_string(node.args[0].value) == "LOCAL_RANK":
            self._filling.add(id(node))  # `os.environ.setdefault("LOCAL_RANK", str(args.local_rank))`
        qualified = self.model.qualified(node.func) or ""
        if not self._deepspeed and qualified.partition(".")[0] == "deepspeed":
            self._deepspeed = True
        if self._horovod is None and qualified.partition(".")[0] == "horovod":
            self._horovod = node
        if self._starts is None and (
            qualified in SPAWN or qualified in START_PROCESSES or is_process_start(node, self.model)
            or started_function(node, self.model) is not None  # a project helper's mp.spawn
        ):
            self._starts = node
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "local_rank":
            self._called.add(id(node.func))
        if dotted_name(node.func) == "getattr" and len(node.args) > 1 and self.model.string_value(node.args[1].value) == "local_rank":
            self._read = self._read or node
        if qualified in ABSL_DEFINES and node.args:
            self._absl_flag(node)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _PARSES:
            self._parse(node, node.func.attr.value)
        self._unknown_options(node)
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            return
        options = _option_strings(node)
        parser = self._parser(node.func.value)
        if any(option.lstrip("-").startswith("local") for option in options):
            self._local.add(parser)
        if "--local-rank" in options:
            self._hyphenated.add(parser)
        elif "--local_rank" in options:
            default = keyword_argument(node, "default")
            if default is None or not self._reads_local_rank(default.value):
                self._pending.append((node, parser))
            else:
                self._from_environment_default.append((node, parser))

    def _unknown_options(self, node: cst.Call) -> None:
        """What a call tells of the options of the parsers made here: a parser handed to a
        call (`add_model_args(parser)`) or given a method outside `_PARSER_METHODS`, an
        `add_argument` whose option strings are not all literals or that takes what is left
        (`nargs=argparse.REMAINDER`), or a parse of other arguments than the command line, or
        of known ones only, leaves them unknown; `parser.parse_args()` rejects an unknown one."""
        frame = self.model.frame.key
        self._opaque.update((frame, arg.value.value) for arg in node.args if isinstance(arg.value, cst.Name))
        if not isinstance(node.func, cst.Attribute):
            return
        method, parser = node.func.attr.value, self._parser(node.func.value)
        if parser not in self._made:
            return
        if method not in _PARSER_METHODS or method == "parse_args" and node.args:
            self._opaque.add(parser)
        elif method == "parse_args":
            self._strict.append((node, parser))
        elif method == "add_argument":
            nargs = keyword_argument(node, "nargs")
            remainder = nargs is not None and (
                self.model.string_value(nargs.value) == "..." or (dotted_name(nargs.value) or "").endswith("REMAINDER")
            )
            literal = all(isinstance(arg.value, cst.SimpleString) for arg in positional_arguments(node))
            if remainder or not literal or any(arg.star for arg in node.args):
                self._opaque.add(parser)

    def leave_Call(self, original_node: cst.Call) -> None:
        if _reports(dotted_name(original_node.func)):
            self._reporting -= 1
        self._filling.discard(id(original_node))

    def _absl_flag(self, node: cst.Call) -> None:
        """`flags.DEFINE_integer("local_rank", ...)`: absl's parser rejects flags it does not
        define, as argparse does (`--local-rank=0`: "Unknown command line flag")."""
        name = self.model.string_value(node.args[0].value)
        if name == "local-rank":
            self._hyphenated.add(_ABSL)
        elif name == "local_rank":
            default = node.args[1] if len(node.args) > 1 and node.args[1].keyword is None else keyword_argument(node, "default")
            if default is None or not self._reads_local_rank(default.value):
                self._pending.append((node, _ABSL))

    def _parse(self, node: cst.Call, method: str) -> None:
        """Record how this parse of its parser treats an option it does not know: `parse_args`
        rejects it (False), `parse_known_args` sets it aside with the extras it returns, and
        those go nowhere (None: `args, _ = ...`, `...[0]`) or to the name they are bound to."""
        parser = self._parser(node.func.value)  # type: ignore[attr-defined]
        if method != "parse_known_args" or id(node) not in self._extras:
            self._parses.setdefault(parser, []).append(False)
        else:
            self._parses.setdefault(parser, []).append(self._extras[id(node)])

    def _tolerant(self, parser: tuple) -> bool:
        """Whether this parser is parsed here, does not leave its function (`return parser`),
        and every parse of this file is a `parse_known_args` whose extras nothing reads (`_`,
        `_unknown`, `[0]`, or a name the file never mentions again): an unknown `--local-rank=N`
        is set aside and stops nothing."""
        source = self.model.source
        return parser in self._parses and parser not in self._returned and all(
            name is None or isinstance(name, str) and (name.startswith("_") or _never_read(name, source))
            for extras in self._parses.values() for name in extras
        )

    def _parser(self, receiver: cst.BaseExpression) -> tuple:
        """The parser an `add_argument` call adds to, through `add_argument_group()` and
        `add_mutually_exclusive_group()`, as (function, dotted name)."""
        for _ in range(3):
            if not isinstance(receiver, cst.Name):
                break
            bound = self.model.constant(receiver.value)
            if not (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute) and bound.func.attr.value in _GROUPS):
                break
            receiver = bound.func.value
        return self.model.frame.key, dotted_name(receiver)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._rewrite is not None and self._hydra is not None and not self._deepspeed:
            self._check_hydra()
        for node, parser in self._pending:
            if parser in self._hyphenated:
                continue
            chain = self._harm(node, self._tolerant(parser))
            if chain is not None:
                self._report(node, chain)
        for node, parser in self._from_environment_default:
            if parser in self._hyphenated or self._tolerant(parser) or self._deepspeed:
                continue
            launch = self._documented_rejecting_launch()
            if launch is not None:
                self._report(node, [launch, Link(StepKind.HARM, _REJECTED_HARM, node)])
        for node, parser in self._strict:
            if parser in self._opaque or parser in self._local or parser in self._returned or self._argv or self._deepspeed:
                continue
            launch = self._undeclared_launch()
            if launch is not None:
                harm = Link(StepKind.HARM, "the parser knows neither spelling: unrecognized arguments, every rank stops", node)
                self.report(node, f"{UNDECLARED_MESSAGE} ({launch[1]})", chain=[launch[0], harm])

    def _undeclared_launch(self) -> tuple[Link, str] | None:
        """Where torch.distributed.launch without `--use_env` starts this very script (an
        importer's launch runs its own parser): a command of the project, or, where the project
        documents no run of it, a usage line of the file that launches the file by its own name
        (a command it builds for another script, `tools/train.py`, is not its own run), in a file
        that names neither `--use_env` nor torchrun. The launcher appends `--local-rank=N`
        (`--local_rank=N` before PyTorch 2.0)."""
        view = self.model.project
        if view is None:
            return None
        for command in view.launches(own=True):
            if "$0" in command.command and os.path.dirname(command.place.path) != os.path.dirname(view.path):
                continue  # `$(dirname "$0")/test.py` is the test.py beside the shell script, not this one
            if LAUNCHERS[command.launcher].passes(command.command) == "--local-rank":
                note = f"{command.place} launches this script with {OLD_LAUNCHER_MODULE}"
                return Link(StepKind.RUNS, f"launches this script with {command.launcher}, which appends --local-rank=N", command.place), note
        source, name = self.model.source, re.escape(os.path.basename(view.path))
        if view.runs(own=True) or "use_env" in source or "torchrun" in source or self._deepspeed_launch():
            return None
        own = re.compile(rf"{OLD_LAUNCHER.pattern}[^\n]*?(?<![\w.-]){name}\b")
        found = own.search(source)
        if found is None:
            return None
        named = Place(view.path, source.count("\n", 0, found.start()) + 1)
        return Link(StepKind.RUNS, f"this file launches itself with {OLD_LAUNCHER_MODULE}, which appends --local-rank=N", named), f"this file names {OLD_LAUNCHER_MODULE}"

    def _harm(self, node: cst.Call, tolerant: bool) -> list[Link] | None:
        """The chain that makes `--local_rank` alone a bug here, or None: a launcher that passes
        `--local-rank`, which the parser rejects; or one that passes no option (torchrun), or
        passes `--local-rank` to a parser that sets it aside (`tolerant`: `parse_known_args`),
        while the option is required or its value is read (and not taken from LOCAL_RANK)."""
        rejecting = self._rejecting_launch()
        if rejecting is not None and not tolerant:
            return [rejecting, Link(StepKind.HARM, _REJECTED_HARM, node)]
        if rejecting is None and (self._deepspeed or self._started_without_option()):
            return None
        required = self._required(node)
        if not required and not self._value_missed(node):
            return None
        # No command of the project names the launcher: the ranks must show in the code (a
        # process group the file or its runner forms); an option alone is a wish, not a launch.
        runs = rejecting or self._torchrun_launch() or self.runs_link()
        if runs is None:
            return None
        unpassed = _SET_ASIDE if rejecting else "with no option passed"
        if required:
            return [runs, Link(StepKind.HARM, f"required=True: {unpassed}, the parser stops every rank", node)]
        read = Link(StepKind.REACHES, "the parsed local_rank is read here", self._reader or self._read)  # type: ignore[arg-type]
        return [read, runs, Link(StepKind.HARM, f"{unpassed} it keeps its default: every rank takes the same device", node)]

    def _documented_rejecting_launch(self) -> Link | None:
        """Where a command of the project (not a mention in the file) starts this script with a
        launcher that passes `--local-rank=N` (torch.distributed.launch without `--use_env`): for
        a parser whose default reads LOCAL_RANK, which torchrun serves, only a documented run
        with that launcher shows the option it rejects."""
        for command in self._launches():
            if LAUNCHERS[command.launcher].passes(command.command) == "--local-rank":
                self._launched_at = command.place
                return Link(StepKind.RUNS, f"launches this script with {command.launcher}, which passes --local-rank=N (PyTorch >= 2.0)", command.place)
        return None

    def _rejecting_launch(self) -> Link | None:
        """Where a launcher that passes `--local-rank=N` starts this script: a command of the
        project running it with torch.distributed.launch, or (unless it calls DeepSpeed,
        whose launcher passes `--local_rank`) its own text naming that launcher."""
        launched = self._documented_rejecting_launch()
        if launched is not None:
            return launched
        named = self._named_at() if not self._deepspeed and not self._deepspeed_launch() else None
        if named is not None:
            return Link(StepKind.RUNS, f"this file names {OLD_LAUNCHER_MODULE}, which passes --local-rank=N (PyTorch >= 2.0)", named)
        return None

    def _torchrun_launch(self) -> Link | None:
        """Where a launcher that passes no option but sets LOCAL_RANK (torchrun) starts it."""
        for command in self._launches():
            launcher = LAUNCHERS[command.launcher]
            if launcher.passes(command.command) is None and launcher.sets_local_rank:
                return Link(StepKind.RUNS, f"launches this script with {command.launcher}, which passes no option (it sets LOCAL_RANK)", command.place)
        return None

    def _started_without_option(self) -> bool:
        """Nothing that starts this script passes the option, nor sets LOCAL_RANK: the project
        launches it only with launchers that pass none (srun, horovodrun, mpirun) or DeepSpeed's,
        which passes `--local_rank`; it calls Horovod; or it starts its processes itself and
        either sets the parsed local_rank itself (`args.local_rank = rank` before each
        `Process(...)`) or no command of the project launches it (`mp.spawn(worker, ...)` runs
        `worker` in each process, not the parser: no launcher's option is missed)."""
        launches = self._launches()
        if launches and not any(LAUNCHERS[command.launcher].sets_local_rank and LAUNCHERS[command.launcher].passes(command.command) is None for command in launches):
            return True
        if not launches and self._passed_by_every_plain_run():
            return True
        if self._horovod is not None or self._starts is not None and (self._set_itself is not None or not launches):
            return True
        if self._filled_by_other_launcher(launches):
            return True
        return self.model.project is not None and own_launcher(self.model.project) is not None

    def _filled_by_other_launcher(self, launches: list[LaunchCommand]) -> bool:
        """The code sets the parsed local_rank itself from another launcher's variable
        (`params.local_rank = int(os.environ["SLURM_LOCALID"])`, in this file, its scripts or
        what they import), and no command of the project runs it with a launcher that sets
        LOCAL_RANK or passes an option (torchrun, torch.distributed.launch): the multi-process
        run its code knows is that launcher's, which passes no option, and no launcher's option
        is missed."""
        project = self.model.project
        filled = self._other_launcher is not None or project is not None and launcher_fill(project) is not None
        if not filled:
            return False
        unnamed = project.unnamed_launches() if project is not None else ()
        return not any(
            LAUNCHERS[command.launcher].sets_local_rank or LAUNCHERS[command.launcher].option is not None
            for command in (*launches, *unnamed)
        )

    def _passed_by_every_plain_run(self) -> bool:
        """The project documents running this script, and every such run is a plain `python`
        one that passes the option itself (`CUDA_VISIBLE_DEVICES=$gpu_id python generate.py
        --local_rank $gpu_id`, one process per GPU, each its own shard): no launcher starts it,
        and the value is the one each run gives."""
        project = self.model.project
        runs = project.runs() if project is not None else []
        return bool(runs) and all(_PASSES_OPTION.search(command.command) for command in runs)

    def _launches(self) -> list[LaunchCommand]:
        project = self.model.project
        return project.launches() if project is not None else []

    def _deepspeed_launch(self) -> bool:
        """A shell script or document of the project runs this script with `deepspeed`."""
        return any(command.launcher == "deepspeed" for command in self._launches())

    def _value_missed(self, node: cst.Call) -> bool:
        """A parsed `local_rank` is read, by this file or by a script that imports its parser
        (`config.local_rank` in `train.py`), and none of them sets it from `LOCAL_RANK`. Where
        every read tests it against None (`if args.local_rank is not None:`) or sits in the
        branch such a test guards, an argparse default of None is a "not passed" marker, no
        device: under torchrun the code takes its other branch. Unless a branch so guarded, with
        no else, is the only place a device can be chosen: no read of `LOCAL_RANK` in the file,
        its scripts or what they import."""
        project = self.model.project
        if self._uses is None:
            self._uses = attribute_uses(project, "local_rank") if project is not None and not self._from_environment else AttributeUses()
        uses = self._uses
        if self._from_environment or uses.from_environment:
            return False
        read, reader = self._read, uses.read
        if read is None and reader is None:
            read, reader = self._guarded_read, uses.guarded
            if read is None and reader is None:
                return False
            open_guard = (self._open_guard or uses.open_guard) and not (self._environment_read or uses.environment)
            if _is_add_argument(node) and self._defaults_to_none(node) and not open_guard:
                return False
            self._read = read
        if read is None and reader is not None and project is not None and reader.path != project.path:
            self._reader = reader
        return True

    def _check_hydra(self) -> None:
        """A hydra script that turns `--key=value` arguments into overrides `key=value`: the
        launcher's `--local-rank=N` becomes `local-rank=N`, which is no key of a config that
        declares `local_rank`, and hydra stops."""
        rejecting = self._rejecting_launch()
        declared = hydra_key(self.model.project, self._hydra, "local_rank")  # type: ignore[arg-type]
        if rejecting is None or declared is None:
            return
        made = Link(StepKind.MADE, "the hydra config of this script declares local_rank", declared)
        harm = Link(StepKind.HARM, "this turns --local-rank=N into the override local-rank=N: no key of the config, hydra stops every rank", self._rewrite)  # type: ignore[arg-type]
        self.report(self._rewrite, f"{HYDRA_MESSAGE} ({declared} declares local_rank)", chain=[made, rejecting, harm])  # type: ignore[arg-type]

    @staticmethod
    def _required(node: cst.Call) -> bool:
        """`required=True`: under torchrun, which passes no option, the parser itself stops every rank."""
        required = keyword_argument(node, "required")
        return required is not None and isinstance(required.value, cst.Name) and required.value.value == "True"

    @staticmethod
    def _defaults_to_none(node: cst.Call) -> bool:
        """No `default=`, or `default=None`: argparse stores None where the option is not passed."""
        default = keyword_argument(node, "default")
        return default is None or isinstance(default.value, cst.Name) and default.value.value == "None"

    def _report(self, node: cst.Call, chain: list[Link]) -> None:
        if self._launched_at is not None:
            where = f" ({self._launched_at} launches this script with {OLD_LAUNCHER_MODULE})"
        elif self._reader and not self._required(node):
            where = f" ({self._reader} reads the parsed local_rank)"
        else:
            where = ""
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            self.report(node, ABSL_MESSAGE + where, chain=chain)  # an absl flag: no fix
            return
        rejected = chain[-1].message == _REJECTED_HARM  # the launcher's option stops the parse, not torchrun
        message = REJECTED_MESSAGE if rejected else self.message
        if chain[-1].message.startswith(_SET_ASIDE) or chain[-1].message.startswith(f"required=True: {_SET_ASIDE}"):
            message = SET_ASIDE_MESSAGE.format(
                harm=_SET_ASIDE_REQUIRED if self._required(node) else _SET_ASIDE_NONE if self._defaults_to_none(node) else _SET_ASIDE_READ
            )
        self.report(node, message + where, replace={node: self._fitted(node, self._fixed(node))}, imports=self._imports(node), chain=chain)

    def _imports(self, node: cst.Call) -> tuple[str, ...]:
        """`import os` where the fix reads LOCAL_RANK (see `_fixed`)."""
        default = keyword_argument(node, "default")
        required = keyword_argument(node, "required")
        reads_environment = default is not None and self._reads_local_rank(default.value)
        is_required = required is not None and not (isinstance(required.value, cst.Name) and required.value.value == "False")
        return ("import os",) if not reads_environment and (not is_required or self._required(node)) else ()

    def _fixed(self, node: cst.Call) -> cst.Call:
        """The call accepting both spellings, defaulting to LOCAL_RANK (see the docstring)."""
        # Before `--local_rank` itself: the first long option names `dest`, and both give local_rank.
        index, original = next(
            (i, arg) for i, arg in enumerate(node.args)
            if isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "--local_rank"
        )
        quote = original.value.quote  # type: ignore[attr-defined]
        alias = cst.Arg(
            value=cst.SimpleString(f"{quote}--local-rank{quote}"),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        args = [*node.args[:index], alias, *node.args[index:]]
        default = keyword_argument(node, "default")
        required = keyword_argument(node, "required")
        if self._imports(node):
            if default is not None:
                args[args.index(default)] = default.with_changes(value=_with_environment_fallback(default.value, quote))
            if required is not None:
                # torchrun sets LOCAL_RANK instead of passing the option: required=True would
                # stop every rank it starts.
                args = _without(args, required)
            if default is not None:
                return node.with_changes(args=args)
            return with_keyword_argument(node.with_changes(args=args), "default", _with_environment_fallback(None, quote))
        return node.with_changes(args=args)

    def _fitted(self, node: cst.Call, fixed: cst.Call) -> cst.Call:
        """`fixed`, its arguments wrapped as black wraps them when the line would pass the
        file's line length (the smallest common limit its longest line keeps within)."""
        module = self.model.module
        if "\n" in module.code_for_node(node):
            return fixed
        lines = split_lines(self.model.source)
        (line, col), (_, end_col) = self.model.spans([node])[id(node)]
        original = lines[line - 1]
        if len(original) - (end_col - col) + len(module.code_for_node(fixed)) <= (limit := _line_length(lines) or 10**6):
            return fixed
        indent = original[: len(original) - len(original.lstrip())]
        unit = module.default_indent if not module.default_indent.strip(" \t") else "    "
        args = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in fixed.args]
        inner = ", ".join(module.code_for_node(arg) for arg in args)

        def newline(indented: bool) -> cst.ParenthesizedWhitespace:
            # The indentation written out (not the block's), so that the edit reads the same
            # on its own (the JSON and editor edits) as in the file.
            return cst.ParenthesizedWhitespace(
                indent=False, last_line=cst.SimpleWhitespace(indent + unit if indented else indent)
            )

        if len(indent) + len(unit) + len(inner) <= limit:
            spaced = [arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for arg in args[:-1]]
            return fixed.with_changes(
                whitespace_before_args=newline(True),
                args=[*spaced, args[-1].with_changes(whitespace_after_arg=newline(False))],
            )
        wrapped = [arg.with_changes(comma=cst.Comma(whitespace_after=newline(True))) for arg in args[:-1]]
        wrapped.append(args[-1].with_changes(comma=cst.Comma(whitespace_after=newline(False))))
        return fixed.with_changes(whitespace_before_args=newline(True), args=wrapped)

    def _reads_local_rank(self, expr: cst.BaseExpression) -> bool:
        """`os.environ["LOCAL_RANK"]`, `int(os.getenv("LOCAL_RANK", -1))`, either branch of a
        conditional expression, or a name bound once to one of these."""
        expr = strip_int(expr)
        if isinstance(expr, cst.IfExp):
            return self._reads_local_rank(expr.body) or self._reads_local_rank(expr.orelse)
        if isinstance(expr, cst.Name):
            bound = self.model.constant(expr.value)
            return bound is not None and not isinstance(bound, cst.Name) and self._reads_local_rank(bound)
        return isinstance(expr, (cst.Call, cst.Subscript)) and environment_key(expr) == "LOCAL_RANK"


def _is_add_argument(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"


# The variables other launchers than torchrun hand each process its local rank in (SLURM's
# SLURM_LOCALID, Open MPI's OMPI_COMM_WORLD_LOCAL_RANK): a launcher that passes no option.
_OTHER_LAUNCHER_VARIABLES = LOCAL_RANK_VARIABLES - {"LOCAL_RANK"}


def _none_tested(node: cst.Comparison) -> cst.Attribute | None:
    """The `x.local_rank` of `x.local_rank is None` / `x.local_rank is not None`."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
        return None
    left, right = node.left, node.comparisons[0].comparator
    if isinstance(left, cst.Attribute) and left.attr.value == "local_rank" and isinstance(right, cst.Name) and right.value == "None":
        return left
    return None


def _none_guard(node: cst.If) -> tuple[cst.CSTNode, bool] | None:
    """Where `local_rank` is not None under this `if`: the body of `if x.local_rank is not None`
    (also `and` further tests), with whether the `if` has an alternative (an else, an elif); or
    the else of `if x.local_rank is None` (the body is the alternative). None: no such test."""
    tests = [test for test in _and_operands(node.test) if isinstance(test, cst.Comparison) and _none_tested(test) is not None]
    if any(isinstance(test.comparisons[0].operator, cst.IsNot) for test in tests):
        return node.body, node.orelse is not None
    if tests and tests[0] is node.test and node.orelse is not None:
        return node.orelse, True
    return None


def _and_operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_and_operands(test.left), *_and_operands(test.right)]
    return [test]


def _mentions_local_rank(expr: cst.CSTNode) -> bool:
    """Whether `expr` reads a `local_rank` (`args.local_rank % 8` is still the parsed value)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "local_rank" or isinstance(expr, cst.Name) and expr.value == "local_rank":
        return True
    return any(_mentions_local_rank(child) for child in children(expr))


def _option_test(body: cst.BaseSuite, name: str) -> cst.Call | None:
    """In the body of a loop over sys.argv with the target `name`: the `name.startswith("--")`
    test of an `if` whose branch hands on the argument without its dashes (`name[2:]`,
    `name[len("--"):]`, `name.lstrip("-")`): the argument turned into an override."""
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Call):
            continue
        test = statement.test
        if not (isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" and dotted_name(test.func.value) == name):
            continue
        if not (test.args and isinstance(test.args[0].value, cst.SimpleString) and test.args[0].value.evaluated_value == "--"):
            continue
        if any(_strips_dashes(node, name) for node in descendants(statement.body)):
            return test
    return None


def _strips_dashes(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Subscript) and dotted_name(node.value) == name:
        return True  # `arg[2:]`, `arg[len("--"):]`
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == name
        and node.func.attr.value in ("lstrip", "replace", "removeprefix")
    )


# -- questions only this rule asks of the program model -------------------------------------


def hydra_key(view, decorator: cst.Call, key: str) -> Place | None:
    """Where the config file a `@hydra.main(config_path=..., config_name=...)` decorator of this
    module names declares `key` at its top level (`local_rank: -1`); None when unknown."""
    if view is None:
        return None
    path, name = (keyword_argument(decorator, word) for word in ("config_path", "config_name"))
    folder = path.value.evaluated_value if path is not None and isinstance(path.value, cst.SimpleString) else None
    config = name.value.evaluated_value if name is not None and isinstance(name.value, cst.SimpleString) else None
    if not isinstance(folder, str) or not isinstance(config, str):
        return None
    relative = os.path.normpath(os.path.join(os.path.dirname(view.path), folder, config if config.endswith((".yaml", ".yml")) else f"{config}.yaml"))
    text = view.document(relative.replace(os.sep, "/"))
    match = re.search(rf"^{re.escape(key)}[ \t]*:", text or "", re.M)
    return Place(relative.replace(os.sep, "/"), text.count("\n", 0, match.start()) + 1) if match else None  # type: ignore[union-attr]


@dataclass(frozen=True)
class AttributeUses:
    """How the scripts of a parser use a parsed attribute (attribute_uses)."""

    read: Place | None = None  # the first read, in the first module that reads it
    from_environment: bool = False  # one assigns it from the variable named like it (`LOCAL_RANK`)
    guarded: Place | None = None  # the first read that only tests it against None or sits where that test guards
    open_guard: bool = False  # a branch guarded by `is not None` has no alternative (no else)
    environment: bool = False  # they, or what they import, read the variable named like it from the environment


def attribute_uses(view, attribute: str) -> AttributeUses:
    """Across `users`: where a module reads `<x>.<attribute>` (the Place in the first such
    module), and whether one assigns it from the environment variable named like it in
    capitals (`args.local_rank = int(os.environ["LOCAL_RANK"])`). A module that does not parse
    reads and assigns nothing. Reads that test it against None (`if args.local_rank is not
    None:`) or sit in the branch such a test guards are kept apart (`guarded`), with whether
    such a branch has no else, and whether the modules, or what they import, read that
    variable from the environment."""
    program = view.program
    read = guarded = None
    from_environment = open_guard = False
    for module in view.users:
        key = ("attribute uses", module, attribute)  # parsing every importer again cost most of an edit
        if key not in program.memos.read:
            program.memos.read[key] = _attribute_uses(program, module, attribute)
        line, environment, guarded_line, open_here = program.memos.read[key]
        if read is None and line is not None:
            read = program.place(module, line)
        if guarded is None and guarded_line is not None:
            guarded = program.place(module, guarded_line)
        from_environment |= environment
        open_guard |= open_here
    environment = guarded is not None and any(
        attribute.upper() in _environment_reads(program, module) for module in _reach(view)
    )
    return AttributeUses(read, from_environment, guarded, open_guard, environment)


def _attribute_uses(program, module: str, attribute: str) -> tuple[int | None, bool, int | None, bool]:
    tree = program.tree(module)
    if tree is None:
        return None, False, None, False
    variable, read, from_environment = attribute.upper(), None, False
    # `hvd.local_rank()` is a call of a method, `self.local_rank` an object's own attribute, and
    # `job_env.local_rank` one of a library's object (`job_env = submitit.JobEnvironment()`) or
    # module (`import idr_torch`): none reads a parsed option
    called = {id(node.func) for node in walk(tree) if isinstance(node, ast.Call)}
    reported = {id(part) for node in walk(tree) if isinstance(node, ast.Call) and _reports(dotted(node.func))
                for arg in (*node.args, *node.keywords) for part in walk(arg)}
    reported |= _filling_parts(tree, variable)
    foreign = _library_objects(program, module, tree)
    tested, open_guard = _none_guarded(tree, attribute)
    guarded = None
    for node in walk(tree):
        if (
            isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load)
            and id(node) not in called and id(node) not in reported and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", *foreign))
        ):
            if id(node) in tested:
                guarded = node.lineno if guarded is None else min(guarded, node.lineno)
            else:
                read = node.lineno if read is None else min(read, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Attribute) and target.attr == attribute for target in targets):
                from_environment |= any(isinstance(part, ast.Constant) and part.value == variable for part in walk(node.value))
    return read, from_environment, guarded, open_guard


def _tests_none(node: ast.AST, attribute: str) -> ast.Attribute | None:
    """The `x.<attribute>` of `x.<attribute> is None` / `is not None`."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot))):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Attribute) and left.attr == attribute and isinstance(right, ast.Constant) and right.value is None:
        return left
    return None


def _none_guarded(tree: ast.Module, attribute: str) -> tuple[set[int], bool]:
    """The reads of `x.<attribute>` that test it against None or sit where such a test guards it
    (the body of `if x.a is not None [and ...]:`, the else of `if x.a is None:`), and whether a
    body so guarded has no else (`_none_guard` on libcst's tree)."""
    found: set[int] = set()
    open_guard = False
    for node in walk(tree):
        tested = _tests_none(node, attribute)
        if tested is not None:
            found.add(id(tested))
        if not isinstance(node, ast.If):
            continue
        operands = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) else [node.test]
        tests = [test for test in operands if _tests_none(test, attribute) is not None]
        if any(isinstance(test.ops[0], ast.IsNot) for test in tests):  # type: ignore[attr-defined]
            suite, open_guard = node.body, open_guard or not node.orelse
        elif tests and tests[0] is node.test and node.orelse:
            suite = node.orelse
        else:
            continue
        found.update(id(part) for line in suite for part in walk(line) if isinstance(part, ast.Attribute) and part.attr == attribute)
    return found, open_guard


_ENVIRONMENT_GETS = ("os.environ.get", "environ.get", "os.getenv", "getenv")


def _environment_key(node: ast.AST, program=None, module: str | None = None) -> str | None:
    """`"RANK"` for `os.environ["RANK"]`, `os.environ.get("RANK", 0)`, `os.getenv("RANK")`
    (ranks.environment_key on ast's tree); given the program, also where the key is a string
    constant of a project module (sockeye's `os.environ[C.DIST_ENV_LOCAL_RANK]`)."""
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("os.environ", "environ"):
        key = node.slice
    elif isinstance(node, ast.Call) and node.args and dotted(node.func) in _ENVIRONMENT_GETS:
        key = node.args[0]
    else:
        return None
    if isinstance(key, ast.Constant):
        return key.value if isinstance(key.value, str) else None
    written = dotted(key)
    if program is None or module is None or written is None:
        return None
    qualified = program.qualify(module, written) if "." in written else f"{module}.{written}"
    found = program.split(qualified, module) if qualified is not None else None
    return _module_string(program, *found) if found is not None else None


def _module_string(program, module: str, name: str) -> str | None:
    """The string a module binds `name` to at its top level, once (`DIST_ENV_LOCAL_RANK = 'LOCAL_RANK'`)."""
    tree = program.tree(module)
    values = [
        line.value for line in (tree.body if tree is not None and name and "." not in name else ())
        if isinstance(line, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in line.targets)
    ]
    value = values[0] if len(values) == 1 else None
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _environment_reads(program, module: str) -> frozenset[str]:
    """The environment variables a module reads (`os.environ["LOCAL_RANK"]`)."""
    key = ("environment reads", module)
    if key not in program.memos.read:
        tree = program.tree(module)
        program.memos.read[key] = frozenset(
            name for node in (walk(tree) if tree is not None else ()) if (name := _environment_key(node, program, module)) is not None
        )
    return program.memos.read[key]


def _reach(view) -> list[str]:
    """The scripts of this module (`users`) and the project modules they import, up to three
    imports away (sorted)."""
    program = view.program
    key = ("reach", view.module)
    if key not in program.memos.read:
        reached = set(view.users)
        for _ in range(3):
            reached |= {module for module in program.modules() if reached & set(program.importers_of(module))}
            reached |= {called for module in list(reached) for called in _called_modules(program, module)}
        program.memos.read[key] = sorted(reached)
    return program.memos.read[key]


def _called_modules(program, module: str) -> set[str]:
    """The project modules whose functions `module` calls by a dotted path (`import src.slurm`,
    then `src.slurm.init_distributed_mode(opt)`: the index keeps that import as `src` alone)."""
    key = ("called modules", module)
    if key not in program.memos.read:
        tree = program.tree(module)
        found = set()
        for node in walk(tree) if tree is not None else ():
            written = dotted(node.func) if isinstance(node, ast.Call) else None
            qualified = program.qualify(module, written) if written is not None and written.count(".") > 1 else None
            place = program.split(qualified, module) if qualified is not None else None
            if place is not None and place[0] != module:
                found.add(place[0])
        program.memos.read[key] = found
    return program.memos.read[key]


def launcher_fill(view) -> Place | None:
    """Where the scripts of this parser, or a project module they import, set `<x>.local_rank`
    from another launcher's variable than LOCAL_RANK (FiD's `params.local_rank =
    int(os.environ["SLURM_LOCALID"])`); None where none does."""
    program = view.program
    for module in _reach(view):
        tree = program.tree(module)
        for node in walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "local_rank" for t in node.targets) and any(
                _environment_key(part, program, module) in _OTHER_LAUNCHER_VARIABLES for part in walk(node.value)
            ):
                return program.place(module, node.lineno)
    return None


_PARSES = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


def _filling_parts(tree: ast.Module, variable: str) -> set[int]:
    """The nodes of what a module writes into the environment variable only where it is unset
    (`if "LOCAL_RANK" not in os.environ: os.environ["LOCAL_RANK"] = ...`,
    `os.environ.setdefault("LOCAL_RANK", ...)`): a launcher's own value wins over them."""
    values: list[ast.AST] = []
    for node in walk(tree):
        if isinstance(node, ast.If) and _tests_unset(node.test, variable):
            values += [line.value for line in node.body if isinstance(line, ast.Assign) and _environment_target(line.targets, variable)]
        elif isinstance(node, ast.Call) and dotted(node.func) in _ENVIRONMENT_SETDEFAULT and node.args:
            first = node.args[0]
            values += node.args[1:] if isinstance(first, ast.Constant) and first.value == variable else []
    return {id(part) for value in values for part in walk(value)}


def _tests_unset(test: ast.expr, variable: str) -> bool:
    return (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn)
        and isinstance(test.left, ast.Constant) and test.left.value == variable and dotted(test.comparators[0]) in ("os.environ", "environ")
    )


def _environment_target(targets: list[ast.expr], variable: str) -> bool:
    return len(targets) == 1 and isinstance(target := targets[0], ast.Subscript) and dotted(target.value) in ("os.environ", "environ") and (
        isinstance(target.slice, ast.Constant) and target.slice.value == variable
    )


def _from_library(program, module: str, origin: str) -> bool:
    """Whether what an import of `module` binds (`origin`: `idr_torch`, `submitit.helpers`) comes
    from a library, no module of the project (a relative import never does)."""
    return not origin.startswith(".") and program.split(origin, module) is None


def _library_objects(program, module: str, tree: ast.Module) -> set[str]:
    """Names bound, wherever the module binds them, only to what a call of an imported library
    (no project module) other than a parse returns (`job_env = submitit.JobEnvironment()`), or
    only by the import of a library (`import idr_torch`): that library's objects and modules,
    not a namespace a project parser filled."""
    libraries = set()
    for node in walk(tree):
        if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                name = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                if _from_library(program, module, name):
                    libraries.add((alias.asname or alias.name).partition(".")[0])
    bound: dict[str, bool] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            value = node.value
            func = value.func if isinstance(value, ast.Call) else None
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            library = (
                isinstance(root, ast.Name) and root.id in libraries and root.id != "argparse"  # `argparse.Namespace(...)` holds options
                and not (isinstance(func, ast.Attribute) and func.attr in _PARSES)
            )
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = bound.get(target.id, True) and library
    return {name for name, only_library in bound.items() if only_library} | (libraries - bound.keys())


def own_launcher(view):
    """Where a module that the scripts of this parser import (`users`, and the project modules
    they import) starts its processes itself and sets each one's `.local_rank` in the same
    loop (`for local_rank in range(n): args.local_rank = local_rank; mp.Process(...)`, tape's
    `launch_process_group`): no launcher passes the option; None where none does."""
    program = view.program
    key = ("own launcher", view.module)
    if key not in program.memos.read:
        program.memos.read[key] = next(
            (program.place(module, line) for module in _reach(view) if (line := _launch_loop(program.tree(module))) is not None),
            None,
        )
    return program.memos.read[key]


_PROCESS_STARTS = ("Process", "spawn", "start_processes")


def _launch_loop(tree: ast.Module | None) -> int | None:
    """The line of a loop that sets `<x>.local_rank` from its own counter (not from LOCAL_RANK)
    and starts a process (`Process(...)`, `spawn(...)`) in its body; None when none does."""
    for loop in walk(tree) if tree is not None else ():
        if not isinstance(loop, ast.For):
            continue
        inside = [node for statement in loop.body for node in walk(statement)]
        sets = any(
            isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "local_rank" for t in node.targets)
            and not any(isinstance(part, ast.Constant) and part.value == "LOCAL_RANK" for part in walk(node.value))
            for node in inside
        )
        starts = any(
            isinstance(node, ast.Call) and (dotted(node.func) or "").rpartition(".")[2] in _PROCESS_STARTS for node in inside
        )
        if sets and starts:
            return loop.lineno
    return None

