"""What a function's summary says of files (ddplint.model.summary): what it saves, where, and
whether what it saves holds tensors on the host. Read from CPython's `ast`:

- `saves`: each `torch.save` (any call named `save`, judged by its qualified name when asked)
  with the models whose `state_dict()` it writes, each under the dict key it is saved in, and
  the file it writes to as a `path_key`;
- `files`: each call named like a save (`torch.save`, `save_checkpoint`, `save_on_master`)
  that is given a file, with that file (`folder:<parameter>` for a `torch.save` into a folder
  its callers name, under a name it makes), and whether it is a `save(obj, f)` whose `obj` holds no
  CUDA tensors (`host`): tensors on the host (`net.cpu()` before `torch.save(net.state_dict(),
  path)`, `{k: v.cpu() ...}`, a state dict taken under FSDP's
  `FullStateDictConfig(offload_to_cpu=True)`, tensors made from Python lists or with
  `device="cpu"`, containers filled with those) or plain Python values (numbers, strings, the
  parsed command-line options); where the function alone cannot tell, what `obj` is as a
  source (`saved`: a parameter its callers fill, the state of an object it made);
- `handed_states`: the state dicts each argument of a call named like a save helper holds
  (`save_checkpoint({"state_dict": model.state_dict()}, path)`), which the program pairs with
  the parameter the helper saves (ddplint.model.values);
- `writes`: saves of dict records (also handed to a save helper), with their keys and whether
  they hold no CUDA tensors;
- `sends`: what calls that pickle their arguments are given; `stores`: call results kept
  beyond what the summary follows; `plain_saves`: saves under no `if` in a function that says
  nothing of ranks;
- `tolerant`: the lines of calls that pass `find_unused_parameters` other than a literal False.

ddplint.model.values answers questions about them over the solved program.
"""

from __future__ import annotations

import ast
import itertools
import posixpath
import re
import string

from ddplint.core.torch_api import DATA_TENSORS, HOST_FACTORIES, JOINING_FUNCTIONS, SAME_DEVICE_METHODS, TORCH_LOAD
from ddplint.model.records import CallResult, Called, FileWrite, HandedFiles, HandedStates, Param, RecordWrite, Save, Send, StateSave, Unlike
from ddplint.prefilter.screens import dotted, walk

# Calls that pickle what they are given (to a started process, a file, a queue), by the last
# part of the name as written; ddplint.model.values judges them by their qualified name when asked.
_SENDING_NAMES = frozenset(("spawn", "start_processes", "Process", "dump", "dumps", "save", "put", "put_nowait"))
# What a saved record may be computed with and still hold only Python values and CPU data.
_PLAIN_CALLS = frozenset(("int", "float", "str", "bool", "len", "list", "dict", "tuple", "set", "sorted", "item", "tolist", "copy", "deepcopy"))
# Methods that put what they are given into their container.
_FILLING = frozenset(("append", "extend", "update", "insert", "add", "setdefault"))
# Calls that copy what they are given, on the same devices.
_COPIES = frozenset(("vars", "deepcopy", "copy", "dict", "list", "tuple", "sorted", "OrderedDict"))
# Words of a name that may hold a model, its tensors or an optimizer's state.
_MODEL_WORDS = frozenset((
    "model", "models", "net", "network", "module", "modules", "optimizer", "optim", "opt", "scheduler", "state",
    "statedict", "weights", "weight", "params", "parameters", "ema", "encoder", "decoder", "backbone", "head",
    "generator", "discriminator", "tensor", "tensors", "buffer", "buffers", "grad", "grads",
))

# Calls that build a path from parts: the file is named by the last part.
_JOINS = frozenset(("os.path.join", "osp.join", "path.join", "join", "Path", "pathlib.Path", "str", "os.fspath"))


def path_key(expr: ast.AST | None, paths: dict | None = None) -> str | None:
    """The file an expression names, comparable across modules: `file:<name>` for a literal
    path (`"ckpt/best.pt"`, `os.path.join(out, "best.pt")`, `out / "best.pt"`,
    `f"{out}/best.pt"`: by its file name; one formatted from a literal by its template,
    `file:epoch_{}.pth` for `f"{out}/epoch_{epoch:03d}.pth"` and `"epoch_{}.pth".format(epoch)`,
    where the template names more than its fields and extension), `option:<attribute>` for a configuration value
    (`args.checkpoint`, `cfg.MODEL.WEIGHTS`: the attributes after the object holding them);
    None when unknown. `paths`: local names bound to a key."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value:
        name = posixpath.basename(expr.value.replace("\\", "/"))
        return f"file:{name}" if name else None
    template = _template(expr)
    if template is not None:
        name = posixpath.basename(template.replace("\\", "/"))
        # a name of its own, not only the fields and an extension (`f"{out}/{name}.pt"`)
        return f"file:{name}" if re.search(r"[A-Za-z0-9]", posixpath.splitext(name)[0].replace("{}", "")) else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return path_key(expr.right, paths)
    if isinstance(expr, ast.Call) and expr.args and not expr.keywords and dotted(expr.func) in _JOINS:
        last = expr.args[-1]
        return None if isinstance(last, ast.Starred) else path_key(last, paths)
    if isinstance(expr, ast.Name):
        return (paths or {}).get(expr.id)
    name = dotted(expr) if isinstance(expr, ast.Attribute) else None
    if name is None:
        return None
    parts = name.split(".")
    if parts[0] in ("self", "cls"):
        parts = parts[1:]
    return f"option:{'.'.join(parts[1:])}" if len(parts) > 1 else None


# A `%` conversion of printf-style formatting (`"epoch_%03d.pth" % epoch`).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]")
_FORMATTER = string.Formatter()


def _template(expr: ast.AST) -> str | None:
    """A path formatted from a literal, with `{}` for each value not known here:
    `f"{out}/epoch_{epoch:03d}.pth"`, `"{}/checkpoint_{}.tar".format(out, epoch)` and
    `"ckpt_%d.pt" % epoch` give `{}/epoch_{}.pth`, `{}/checkpoint_{}.tar`, `ckpt_{}.pt`; a
    string literal handed to `format` is written in (`"{}-{}.pth".format(arch, "best")` gives
    `{}-best.pth`): files the same code names alike, whatever the epoch or the folder."""
    if isinstance(expr, ast.JoinedStr) and expr.values:
        parts = [value.value if isinstance(value, ast.Constant) else "{}" for value in expr.values]
        return "".join(str(part) for part in parts)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) and isinstance(expr.left, ast.Constant) and isinstance(expr.left.value, str):
        return _PERCENT.sub(lambda match: "%" if match.group() == "%%" else "{}", expr.left.value)
    if not (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format"
        and isinstance(expr.func.value, ast.Constant) and isinstance(expr.func.value.value, str)
    ):
        return None
    given = {str(index): value for index, value in enumerate(expr.args)}
    given.update({word.arg: word.value for word in expr.keywords if word.arg is not None})
    try:
        fields = list(_FORMATTER.parse(expr.func.value.value))
    except ValueError:
        return None
    out, auto = [], 0
    for literal, field, _, _ in fields:
        out.append(literal)
        if field is None:
            continue
        if field == "":
            field, auto = str(auto), auto + 1
        value = given.get(field)
        known = isinstance(value, ast.Constant) and isinstance(value.value, str)
        out.append(value.value if known else "{}")  # type: ignore[union-attr]
    return "".join(out)


def loaded_path_key(model, call) -> str | None:
    """The file a `torch.load` call (libcst) reads, as `path_key` names it; a name bound once
    is followed (`path = os.path.join(out, "best.pt")`). `model`: the file's semantic model."""
    from ddplint.semantic.edits import argument_for

    path = argument_for(call, TORCH_LOAD, "f")
    return None if path is None else expression_path_key(model, path.value)


def expression_path_key(model, expr) -> str | None:
    """The file a path expression (libcst) names, as `path_key` names it, read in its own
    scope; a name bound once is followed. `model`: the file's semantic model."""
    import libcst as cst

    if isinstance(expr, cst.Name):
        expr = model.constant(expr.value) or expr
    try:
        return path_key(ast.parse(cst.Module([]).code_for_node(expr).strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _argument(node: ast.Call, index: int, keyword: str) -> ast.AST | None:
    for found in node.keywords:
        if found.arg == keyword:
            return found.value
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return node.args[index]
    return None


def read_save(reader, node: ast.Call, callee: str) -> None:
    """Note a `save(obj, f)` call on the function's summary (`saves`): [callee, [[dict key,
    source of the model whose state_dict() it saves], ...], path key, line]."""
    saved = _argument(node, 0, "obj")
    held = _states_in(reader, saved)
    written = _argument(node, 1, "f")
    path = path_key(written, reader.paths)
    # a helper's parameter (`def save_checkpoint(model, path)`): its callers name the file
    handed = isinstance(written, ast.Name) and path is None and reader.env.get(written.id) == Param(written.id)
    state_of = _state_of(reader, saved)
    if state_of is not None:
        reader.draft.state_saves.append(StateSave(callee, state_of, node.lineno))
    if held:
        reader.draft.saves.append(Save(callee, tuple(held), f"param:{written.id}" if handed else path, node.lineno))
    if path is not None or handed:
        host = _on_host(reader, saved)
        source = None if host else _saved_source(reader, saved)
        reader.draft.files.append(FileWrite(callee, path or f"param:{written.id}", host, node.lineno, source))  # type: ignore[union-attr]
    elif (folder := _in_handed_folder(reader, written)) is not None:
        # `os.path.join(save_dir, f"{label}.pth")`: a file the callers place, by a name made here
        reader.draft.files.append(FileWrite(callee, folder, _on_host(reader, saved), node.lineno))


def _states_in(reader, saved: ast.AST | None) -> list:
    """[(dict key, source)] of the state dicts a saved value holds: `x.state_dict()` in it, or
    in a local dict it names (`checkpoint = {"model": ddp.state_dict()}`, then `save(checkpoint, path)`)."""
    held: list = []
    _state_dicts(reader, saved, None, held)
    if isinstance(saved, ast.Name):
        held += reader.held_states.get(saved.id, ())
    return held


def _in_handed_folder(reader, written: ast.AST | None) -> str | None:
    """`folder:<parameter>` for a path joined onto a parameter of the function (`os.path.join(
    save_dir, name)`, also through a local name bound to one) whose file name `path_key` cannot
    tell; None otherwise."""
    if isinstance(written, ast.Name):
        return reader.folders.get(written.id)
    if not (isinstance(written, ast.Call) and len(written.args) > 1 and dotted(written.func) in _JOINS):
        return None
    folder = written.args[0]
    if isinstance(folder, ast.Name) and reader.env.get(folder.id) == Param(folder.id):
        return f"folder:{folder.id}"
    return None


def _state_of(reader, saved: ast.AST | None) -> str | None:
    """The object, as written, whose whole state dict a saved value is: `sched.state_dict()`,
    or a local bound to one (`state = sched.state_dict()`); None for anything else."""
    if isinstance(saved, ast.Name):
        return reader.state_of.get(saved.id)
    if isinstance(saved, ast.Call) and isinstance(saved.func, ast.Attribute) and saved.func.attr == "state_dict" and not (
        saved.args or saved.keywords
    ):
        return dotted(saved.func.value)
    return None


def _saved_source(reader, saved: ast.AST | None):
    """What a saved value is, for the program to judge where the function cannot: a parameter
    (also `**kwargs`, and what `vars()` or a copy makes of one), or the state dict of an object
    the function made (`CallResult("StepLR().state_dict")`)."""
    while isinstance(saved, ast.Call) and isinstance(saved.func, ast.Name) and saved.func.id in _COPIES and len(saved.args) == 1:
        saved = saved.args[0]
    if isinstance(saved, ast.Name) and reader.keywords_name == saved.id:
        return Param(saved.id)
    return reader.source(saved) if saved is not None else None


def _read_file_write(reader, node: ast.Call, callee: str) -> None:
    """Note a call named like a save helper (`save_checkpoint(state, "best.pt")`) that is given
    a file: it may write that file with anything (`files`, never on the host)."""
    given: dict[str, str] = {}
    for index, value in enumerate(node.args):
        if isinstance(value, ast.Starred):
            break
        path = path_key(value, reader.paths)
        if path is not None:
            given[str(index)] = path
    for keyword in node.keywords:
        path = path_key(keyword.value, reader.paths) if keyword.arg is not None else None
        if path is not None:
            given[keyword.arg] = path  # type: ignore[index]
    if given:
        reader.draft.files.append(FileWrite(callee, next(iter(given.values())), False, node.lineno))
        reader.draft.handed_files.append(HandedFiles(callee, given, node.lineno))
    _read_handed_states(reader, node, callee)


def _read_handed_states(reader, node: ast.Call, callee: str) -> None:
    """Note the state dicts each argument of a call named like a save helper holds
    (`handed_states`): a dict literal (`{"state_dict": model.state_dict()}`), a local dict that
    holds some, or a state dict itself."""
    states: dict[str, tuple] = {}
    positional = itertools.takewhile(lambda value: not isinstance(value, ast.Starred), node.args)  # positions end at `*args`
    for name, value in [*((str(index), value) for index, value in enumerate(positional)),
                        *((word.arg, word.value) for word in node.keywords if word.arg is not None)]:
        held = _states_in(reader, value)
        if held:
            states[name] = tuple(held)
    if states:
        reader.draft.handed_states.append(HandedStates(callee, states, node.lineno))


def _on_host(reader, expr: ast.AST | None) -> bool:
    """Whether a saved value holds no CUDA tensors: the state dict of a module moved to the host
    in place before (`net.cpu()`, also of its `.module`) or on the way (`net.cpu().state_dict()`),
    one offloaded by its configuration (`_offloaded`), a `.cpu()` result, a tensor made on the
    host (`_made_on_host`), plain Python values (constants, the parsed command-line options), a
    name bound to one of these, a container or comprehension of them, or either of two."""
    if expr is None:
        return False
    if isinstance(expr, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(expr, ast.Call) and (_offloaded(reader, expr) or _made_on_host(reader, expr)):
        return True
    if isinstance(expr, (ast.Name, ast.Attribute)):  # `state`, `self.ids` bound here before
        return dotted(expr) in reader.hosted
    if isinstance(expr, ast.Subscript):  # an element of a container of host values
        return _on_host(reader, expr.value)
    if isinstance(expr, ast.IfExp):
        return _on_host(reader, expr.body) and _on_host(reader, expr.orelse)
    if isinstance(expr, ast.DictComp):
        return _on_host(reader, expr.value)
    if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _on_host(reader, expr.elt)
    if isinstance(expr, ast.Dict):
        return all(_on_host(reader, value) for value in expr.values)
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return all(_on_host(reader, element) for element in expr.elts)
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute):
        return False
    method, receiver = expr.func.attr, expr.func.value
    if method == "cpu" and not expr.args or method in ("item", "tolist"):
        return True
    if method == "to" and expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value == "cpu":
        return True
    if method in SAME_DEVICE_METHODS:
        return _on_host(reader, receiver)
    if method != "state_dict" or expr.args:
        return False
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "cpu":
        return True
    module = dotted(receiver)
    module = module.removesuffix(".module") if module is not None else None
    return module is not None and (module in reader.moved or module in reader.hosted)


def _made_on_host(reader, call: ast.Call) -> bool:
    """A call whose result holds no CUDA tensors by what it is: a tensor factory or a tensor of
    Python data (`torch.zeros(n)`, `torch.tensor(ids)`) given no device other than the CPU, a
    join of host tensors (`torch.cat(parts)`), a copy of host values (`vars(args)`,
    `copy.deepcopy(meta)`, `dict(meta)`), or the options a command-line parser parses."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("parse_args", "parse_known_args", "int", "float", "str", "bool", "len"):
        return True
    first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
    if name in _COPIES and not call.keywords:
        return first is None or _on_host(reader, first)
    if name in JOINING_FUNCTIONS:
        return first is not None and _on_host(reader, first)
    receiver = dotted(func.value) if isinstance(func, ast.Attribute) else None
    if receiver is not None and receiver.rpartition(".")[2] == "cuda":  # `torch.cuda.FloatTensor(...)`
        return False
    device = next((k.value for k in call.keywords if k.arg == "device"), None)
    if device is not None and not (isinstance(device, ast.Constant) and device.value == "cpu"):
        return False
    if name in HOST_FACTORIES:
        return True
    return name in DATA_TENSORS and first is not None and (
        isinstance(first, (ast.List, ast.Tuple, ast.ListComp, ast.Constant))
        or (isinstance(first, ast.Name) and first.id in reader.sequences)
        or _on_host(reader, first)
    )


def _offloads(reader, config: ast.AST | None) -> bool:
    """Whether a state-dict configuration puts what it produces on the host: FSDP's
    `FullStateDictConfig(offload_to_cpu=True)` (and the other `*StateDictConfig`s), DCP's
    `StateDictOptions(cpu_offload=True)`, or a local name bound to one (a literal True only)."""
    if isinstance(config, ast.Name):
        return config.id in reader.offload_configs
    if not isinstance(config, ast.Call):
        return False
    name = (dotted(config.func) or "").rpartition(".")[2]
    flag = "cpu_offload" if name == "StateDictOptions" else "offload_to_cpu" if name.endswith("StateDictConfig") else None
    return flag is not None and any(k.arg == flag and isinstance(k.value, ast.Constant) and k.value.value is True for k in config.keywords)


def offloading(reader, statement: ast.With | ast.AsyncWith) -> list[tuple[str, bool, bool]]:
    """The `with FSDP.state_dict_type(model, type, config, optim_config)` items of a with
    statement, as (model, whether its state dict is on the host, whether its optimizer's is)."""
    found = []
    for item in statement.items:
        context = item.context_expr
        if isinstance(context, ast.Call) and isinstance(context.func, ast.Attribute) and context.func.attr == "state_dict_type":
            model = _argument(context, 0, "module")
            model = dotted(model) if model is not None else None
            if model is not None:
                found.append((
                    model,
                    _offloads(reader, _argument(context, 2, "state_dict_config")),
                    _offloads(reader, _argument(context, 3, "optim_state_dict_config")),
                ))
    return found


def _offloaded(reader, call: ast.Call) -> bool:
    """A state dict its configuration puts on the host: `model.state_dict()` (also of a
    submodule) or `FSDP.optim_state_dict(model, optim)` in a `with FSDP.state_dict_type(model,
    ...)` block given an offloading configuration for it (`reader.offloading`), or DCP's
    `get_model_state_dict(model, options=StateDictOptions(cpu_offload=True))`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("get_model_state_dict", "get_optimizer_state_dict"):
        return any(k.arg == "options" and _offloads(reader, k.value) for k in call.keywords)
    if name == "state_dict" and isinstance(func, ast.Attribute) and not call.args:
        model, which = dotted(func.value), 1
    elif name == "optim_state_dict" and call.args:
        model, which = dotted(call.args[0]), 2
    else:
        return False
    return model is not None and any(
        context[which] and (model == context[0] or model.startswith(context[0] + ".")) for context in reader.offloading
    )


def _host(reader, statement: ast.stmt) -> None:
    """Follow, in statement order, the modules moved to the host in place (`net.cpu()`; moved
    back by `net.cuda()`, `net.to(device)`, or rebound) and the names bound to a value on the
    host (`state = net.state_dict()` after that)."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("cpu", "cuda", "to"):
        moved = dotted(call.func.value)
        if moved is not None:
            if call.func.attr == "cpu" and not call.args and not call.keywords:
                reader.moved.add(moved)
            else:
                reader.moved.discard(moved)
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _FILLING:
        # `parts.append(v)`, `state.update(v)`: a container of host values stays one if v is one
        filled = _container(call.func.value)
        if filled in reader.hosted and not all(_on_host(reader, v) for v in (*call.args, *(k.value for k in call.keywords))):
            reader.hosted.discard(filled)
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        iterated = statement.iter
        host = isinstance(iterated, ast.Call) and dotted(iterated.func) == "range" or _on_host(reader, iterated)
        for name in walk(statement.target):
            if isinstance(name, ast.Name):
                (reader.hosted.add if host else reader.hosted.discard)(name.id)
                reader.sequences.discard(name.id)
        converted = _converted_in_place(statement)
        if converted is not None:
            reader.hosted.add(converted)
    if isinstance(statement, ast.Assign):
        _assigned(reader, statement)


def _converted_in_place(loop: ast.For | ast.AsyncFor) -> str | None:
    """`for key, param in state.items(): state[key] = param.cpu()`: the dict the loop moves to
    the host item by item, every item in its own body's statement; None for any other loop.
    (What else the body stores into it is judged as the body runs: a CUDA item undoes it.)"""
    iterated, target = loop.iter, loop.target
    if not (
        isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "items"
        and not iterated.args and isinstance(target, ast.Tuple) and len(target.elts) == 2
        and all(isinstance(element, ast.Name) for element in target.elts)
    ):
        return None
    owner, (key, value) = dotted(iterated.func.value), (element.id for element in target.elts)  # type: ignore[attr-defined]
    for statement in loop.body:
        if (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(item := statement.targets[0], ast.Subscript) and dotted(item.value) == owner
            and isinstance(item.slice, ast.Name) and item.slice.id == key
            and isinstance(call := statement.value, ast.Call) and isinstance(call.func, ast.Attribute)
            and dotted(call.func.value) == value and (call.func.attr == "cpu" and not call.args or _to_cpu(call))
        ):
            return owner
    return None


def _to_cpu(call: ast.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value == "cpu"


def _assigned(reader, statement: ast.Assign) -> None:
    """What an assignment binds: names to host values, configurations that offload, Python
    lists (`sequences`); an item stored into a container of host values keeps it one only if
    the item is one too (`state[key] = value`)."""
    value = statement.value
    host, offloads = _on_host(reader, value), _offloads(reader, value)
    listed = isinstance(value, (ast.List, ast.Tuple, ast.ListComp)) or (
        isinstance(value, ast.Call) and dotted(value.func) in ("list", "tuple", "sorted")
    )
    state_of = _state_of(reader, value) if not isinstance(value, ast.Name) else None
    for target in statement.targets:
        if isinstance(target, ast.Name):
            if state_of is not None:
                reader.state_of[target.id] = state_of
            else:
                reader.state_of.pop(target.id, None)
        if isinstance(target, ast.Subscript):
            owner = _container(target.value)
            if owner in reader.hosted and not host:
                reader.hosted.discard(owner)
            continue
        name = dotted(target)
        if name is None:
            for inner in walk(target):  # `a, b = ...`: each name now holds what is unknown here
                if isinstance(inner, ast.Name):
                    reader.hosted.discard(inner.id)
                    reader.sequences.discard(inner.id)
                    reader.state_of.pop(inner.id, None)
            continue
        (reader.offload_configs.add if offloads and isinstance(target, ast.Name) else reader.offload_configs.discard)(name)
        reader.moved.discard(name)
        (reader.hosted.add if host else reader.hosted.discard)(name)
        (reader.sequences.add if listed else reader.sequences.discard)(name)


def _container(expr: ast.AST) -> str | None:
    """The dotted name of the container an item is stored into, through the items of items
    it holds (`state["model"][key] = v` fills `state`)."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return dotted(expr)


def _state_dicts(reader, expr: ast.AST | None, key: str | None, held: list) -> None:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict":
        source = reader.source(expr.func.value)
        unlike = reader.unlike(expr.func.value) if source is not None else ()
        if source is not None:
            held.append((key, Unlike(source, unlike) if unlike else source))  # the `else:` of `if isinstance(model, DDP):`
        return
    if isinstance(expr, ast.Dict):
        for entry_key, value in zip(expr.keys, expr.values):
            inner = entry_key.value if isinstance(entry_key, ast.Constant) and isinstance(entry_key.value, str) else None
            _state_dicts(reader, value, inner if inner is not None else key, held)
        return
    if isinstance(expr, (ast.Tuple, ast.List)):
        for element in expr.elts:
            _state_dicts(reader, element, key, held)
    elif isinstance(expr, ast.Call) and dotted(expr.func) == "dict":  # `dict(model=ddp.state_dict())`
        for word in expr.keywords:
            _state_dicts(reader, word.value, word.arg if word.arg is not None else key, held)


def _words(name: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name.replace("state_dict", "statedict")).lower()))


def _plain(expr: ast.AST) -> bool:
    """Whether a saved value is built only of Python values the object keeps: constants, its
    own attributes (`self.epoch`) not named like a model, tensor or optimizer state, literal
    containers of those, and conversions of them (`list(self.candidates)`, `x.item()`). A
    local name or another object's attribute may be anything: not plain."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return all(_plain(element) for element in expr.elts)
    if isinstance(expr, ast.Dict):
        return all(key is None or _plain(key) for key in expr.keys) and all(_plain(value) for value in expr.values)
    if isinstance(expr, ast.Attribute):
        name = dotted(expr)
        parts = name.split(".") if name else []
        return len(parts) > 1 and parts[0] == "self" and not any(_words(part) & _MODEL_WORDS for part in parts[1:])
    if isinstance(expr, ast.Call):
        method = expr.func.attr if isinstance(expr.func, ast.Attribute) else None
        if method in ("item", "tolist") and not expr.args:
            return True
        return dotted(expr.func) in _PLAIN_CALLS and not expr.keywords and all(_plain(arg) for arg in expr.args)
    return False


def _record_of(reader, expr: ast.AST) -> tuple[list[str], bool] | None:
    """(keys, whether it holds no CUDA tensors) of a dict literal with string keys."""
    if not isinstance(expr, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
        return None
    return [k.value for k in expr.keys], all(_no_cuda(reader, v) for v in expr.values)  # type: ignore[union-attr]


def _no_cuda(reader, expr: ast.AST) -> bool:
    """A record's value that holds no CUDA tensors: a Python value the object keeps, or a value
    on the host."""
    return _plain(expr) or _on_host(reader, expr)


def _read_write(reader, node: ast.Call, callee: str) -> None:
    """A save of a dict record (`writes`), also one handed to a save helper
    (`save_checkpoint({"model": ...}, path)`): [callee, its keys, whether it holds no CUDA
    tensors, line]."""
    saved = _argument(node, 0, "obj")
    found = reader.records.get(saved.id) if isinstance(saved, ast.Name) else _record_of(reader, saved) if saved is not None else None
    if found is not None:
        reader.draft.writes.append(RecordWrite(callee, tuple(sorted(set(found[0]))), found[1], node.lineno))


def read_call(reader, node: ast.Call, callee: str) -> None:
    """What a call says about values: a save, a `find_unused_parameters` argument."""
    if callee.rpartition(".")[2] == "save":
        read_save(reader, node, callee)
        _read_write(reader, node, callee)

    elif "save" in callee.rpartition(".")[2].lower():
        _read_file_write(reader, node, callee)
        _read_write(reader, node, callee)
    if "save" in callee.rpartition(".")[2].lower() and not reader._tests:
        reader.draft.plain_saves.append(Called(callee, node.lineno))  # kept by `settle_save`
    if callee.rpartition(".")[2] in _SENDING_NAMES:
        sent = [reader.source(value) for value in _contained([*node.args, *(k.value for k in node.keywords)])]
        sent = [source for source in sent if source is not None]
        if sent:
            reader.draft.sends.append(Send(callee, tuple(sent), node.lineno))
    for word in node.keywords:
        if word.arg == "find_unused_parameters" and not (isinstance(word.value, ast.Constant) and word.value.value is False):
            reader.draft.tolerant.append(node.lineno)


# Words of a name or string that may test or name the rank, or hand the save to a framework
# or an in-memory file: a function that has one is no plain save helper.
_RANK_WORDS = ("rank", "master", "main", "primary", "global_zero", "chief", "leader", "dist", "world", "barrier",
               "accelerat", "fabric", "trainer", "lightning", "process", "bytesio", "buffer", "temp")


def settle_save(reader, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Keep `plain_saves` ([callee, line] of each call named like a save under no `if`:
    `torch.save(...)`, `save_checkpoint(...)`) only where the function says nothing of ranks,
    processes or in-memory files, and has no early exit under an `if`: a helper (`def
    save_checkpoint(state, filename): torch.save(state, filename)`) that every process calling
    it runs to the save."""
    if not reader.draft.plain_saves:
        return
    for inner in walk(node):
        if isinstance(inner, ast.If) and any(isinstance(n, (ast.Return, ast.Raise)) for b in inner.body for n in walk(b)):
            break
        word = (
            inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute)
            else inner.arg if isinstance(inner, ast.arg)
            else inner.value if isinstance(inner, ast.Constant) and isinstance(inner.value, str) else None
        )
        if word is not None and any(part in word.lower() for part in _RANK_WORDS):
            break
    else:
        return
    reader.draft.plain_saves = []


def _contained(values: list):
    """The values, and those inside literal tuples, lists, sets and dicts among them."""
    for value in values:
        if isinstance(value, ast.Starred):
            value = value.value
        yield value
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            yield from _contained(value.elts)
        elif isinstance(value, ast.Dict):
            yield from _contained(list(value.values))


def _held(expr: ast.AST, out: list[str]) -> None:
    """Names whose object `expr` may keep (in a container, a closure, an attribute): not those
    only read through (`d[k]`, `d.items()`), nor those passed to a call (`calls` has them)."""
    if isinstance(expr, ast.Name):
        out.append(expr.id)
    elif isinstance(expr, (ast.Subscript, ast.Attribute)):
        if not isinstance(expr.value, ast.Name):
            _held(expr.value, out)
        if isinstance(expr, ast.Subscript):
            _held(expr.slice, out)
    elif isinstance(expr, ast.Call):
        for value in (expr.func, *expr.args, *(k.value for k in expr.keywords)):
            if not isinstance(value, ast.Name):
                _held(value, out)
    else:
        for child in ast.iter_child_nodes(expr):
            _held(child, out)


def _stores(reader, statement: ast.stmt) -> None:
    """Note the call results a statement may keep beyond what the summary follows (`stores`):
    put in a container, stored on an object or a subscript, yielded, captured."""
    names: list[str] = []
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        value = statement.value
        if not all(isinstance(t, ast.Name) for t in targets) and isinstance(value, ast.Name):
            names.append(value.id)
        elif not isinstance(value, (ast.Name, ast.Call)) or not all(isinstance(t, ast.Name) for t in targets):
            _held(value, names)
    elif isinstance(statement, ast.Return) and statement.value is not None:
        if not isinstance(statement.value, (ast.Name, ast.Call)):
            _held(statement.value, names)
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, (ast.Yield, ast.YieldFrom, ast.Await)):
        if statement.value.value is not None:
            _held(statement.value.value, names)
    for name in names:
        source = reader.env.get(name)
        if isinstance(source, CallResult) and source not in reader.draft.stores:
            reader.draft.stores.append(source)


def _records(reader, statement: ast.stmt) -> None:
    """Dicts built key by key (`info = {}` ... `info["epoch"] = self.epoch`): name -> (keys, plain)."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name):
        found = _record_of(reader, value) if not (isinstance(value, ast.Call) and dotted(value.func) == "dict" and not value.args and not value.keywords) else ([], True)
        if found is None:
            reader.records.pop(target.id, None)
        else:
            reader.records[target.id] = found
    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in reader.records:
        keys, plain = reader.records[target.value.id]
        key = target.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            reader.records[target.value.id] = ([*keys, key.value], plain and _no_cuda(reader, value))
        else:
            reader.records.pop(target.value.id)


def _held_states(reader, statement: ast.stmt) -> None:
    """Local dicts that hold state dicts, for `read_save`: built in one literal (`checkpoint =
    {"model": ddp.state_dict(), "epoch": epoch}`) or key by key (`data = {}` ...
    `data["encoder"] = self.encoder.state_dict()`, `data.update(model=...)`): name -> [(dict
    key, source of the model whose state_dict() it holds)], each source as it is where the dict
    is filled."""
    held = reader.held_states
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Name):
            held.pop(target.id, None)
            if isinstance(value, ast.Dict) or isinstance(value, ast.Call) and dotted(value.func) == "dict":
                _state_dicts(reader, value, None, held.setdefault(target.id, []))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in held:
            key = target.slice.value if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str) else None
            _state_dicts(reader, value, key, held[target.value.id])
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "update" and isinstance(call.func.value, ast.Name):
            entries = held.get(call.func.value.id)
            if entries is not None:
                for given in call.args:
                    _state_dicts(reader, given, None, entries)
                for word in call.keywords:
                    _state_dicts(reader, word.value, word.arg, entries)


def read_statement(reader, statement: ast.stmt) -> None:
    """Names bound to a path (`path = os.path.join(out, "best.pt")`), for `path_key`; call
    results kept beyond what the summary follows."""
    _stores(reader, statement)
    _records(reader, statement)
    _held_states(reader, statement)
    _host(reader, statement)
    bound = []
    if isinstance(statement, ast.Assign):
        bound = [(target, path_key(statement.value, reader.paths)) for target in statement.targets]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):  # `with open(path, "wb") as f`: f is that file
        bound = [(item.optional_vars, _opened(item.context_expr, reader.paths)) for item in statement.items]
    _bind_paths(reader.paths, bound)
    if isinstance(statement, ast.Assign):
        folder = _in_handed_folder(reader, statement.value) if all(key is None for _, key in bound) else None
        for target in statement.targets:
            if isinstance(target, ast.Name) and folder is not None:
                reader.folders[target.id] = folder
            elif isinstance(target, ast.Name):
                reader.folders.pop(target.id, None)


def _bind_paths(paths: dict[str, str], bound: list) -> None:
    """Bind each (target, path key) pair's name to its key, or unbind it where the key is None."""
    for target, key in bound:
        if isinstance(target, ast.Name):
            if key is None:
                paths.pop(target.id, None)
            else:
                paths[target.id] = key


def module_paths(tree: ast.Module) -> dict[str, str]:
    """The module's own names bound to a file by its top-level assignments (`CKPT =
    os.path.join(OUT, "best.pt")`), for the functions that read them."""
    paths: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            key = path_key(statement.value, paths)
            _bind_paths(paths, [(target, key) for target in statement.targets])
    return paths


def _opened(expr: ast.AST, paths: dict) -> str | None:
    """The path key of the file `open(path, ...)` opens."""
    if isinstance(expr, ast.Call) and dotted(expr.func) in ("open", "io.open") and expr.args:
        return path_key(expr.args[0], paths)
    return None
