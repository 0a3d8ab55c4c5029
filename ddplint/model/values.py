"""What the program's values are, beyond "a DDP model": the files it saves and what they hold,
and the models it wraps in DDP with the arguments it passes.

Read per function by the program's summaries (ddplint.model.program), from CPython's `ast`:

- `saves`: each `torch.save` (any call named `save`, judged by its qualified name when asked)
  with the models whose `state_dict()` it writes, each under the dict key it is saved in, and
  the file it writes to as a `path_key`;
- `files`: each call named like a save (`torch.save`, `save_checkpoint`, `save_on_master`)
  that is given a file, with that file, and whether it is a `save(obj, f)` whose `obj` is on
  the host (`net.cpu()` before `torch.save(net.state_dict(), path)`, `{k: v.cpu() ...}`, a
  state dict taken under FSDP's `FullStateDictConfig(offload_to_cpu=True)`);
- `tolerant`: the lines of calls that pass `find_unused_parameters` other than a literal False.

`Values` answers, over the solved program: which checkpoints hold a DDP model's state dict
(keys prefixed `module.`), and where a project class's objects are wrapped in DDP and with
which arguments, and which saved files hold tensors on the host only. A model whose `state_dict()` is saved counts only when the program knows it
is a DDP model (`ddp_model.state_dict()`); `model.module.state_dict()` and a
`model_without_ddp = model.module` are the inner model, which the program never takes for one.
"""

from __future__ import annotations

import ast
import posixpath
import re

from ddplint.prefilter.screens import dotted, walk
from ddplint.core.torch_api import PICKLE_DUMP, PROCESS, SPAWN, START_PROCESSES, TORCH_LOAD, TORCH_SAVE

# Calls that pickle what they are given (to a started process, a file, a queue), by the last
# part of the name as written; `sends` judges them by their qualified name when asked.
_SENDING_NAMES = frozenset(("spawn", "start_processes", "Process", "dump", "dumps", "save", "put", "put_nowait"))
_SENDS = SPAWN | START_PROCESSES | PROCESS | PICKLE_DUMP | TORCH_SAVE
# Calls that read a value in place (log it, measure it, copy its items): the object, and the
# factory a defaultdict holds, stay where they are.
_READING_CALLS = frozenset((
    "print", "len", "sorted", "list", "dict", "set", "tuple", "str", "repr", "format", "sum", "max", "min",
    "info", "debug", "warning", "error", "log", "update", "items", "keys", "values",
))
_MAX_CALLERS_DEPTH = 3  # returns followed up through callers; deeper is unknown
# What a saved record may be computed with and still hold only Python values and CPU data.
_PLAIN_CALLS = frozenset(("int", "float", "str", "bool", "len", "list", "dict", "tuple", "set", "sorted", "item", "tolist", "copy", "deepcopy"))
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
    `f"{out}/best.pt"`: by its file name), `option:<attribute>` for a configuration value
    (`args.checkpoint`, `cfg.MODEL.WEIGHTS`: the attributes after the object holding them);
    None when unknown. `paths`: local names bound to a key."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value:
        name = posixpath.basename(expr.value.replace("\\", "/"))
        return f"file:{name}" if name else None
    if isinstance(expr, ast.JoinedStr) and expr.values:
        last = expr.values[-1]
        if isinstance(last, ast.Constant) and isinstance(last.value, str) and ("/" in last.value or len(expr.values) == 1):
            return path_key(last, paths)
        return None
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


def loaded_path_key(model, call) -> str | None:
    """The file a `torch.load` call (libcst) reads, as `path_key` names it; a name bound once
    is followed (`path = os.path.join(out, "best.pt")`). `model`: the file's semantic model."""
    import libcst as cst

    from ddplint.semantic.edits import argument_for

    path = argument_for(call, TORCH_LOAD, "f")
    if path is None:
        return None
    expr = path.value
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
    held: list = []
    saved = _argument(node, 0, "obj")
    _state_dicts(reader, saved, None, held)
    written = _argument(node, 1, "f")
    path = path_key(written, reader.paths)
    if held:
        # a helper's parameter (`def save_checkpoint(model, path)`): its callers name the file
        handed = isinstance(written, ast.Name) and path is None and reader.env.get(written.id) == ["param", written.id]
        reader.record.setdefault("saves", []).append([callee, held, f"param:{written.id}" if handed else path, node.lineno])
    if path is not None:
        reader.record.setdefault("files", []).append([callee, path, saved is not None and _on_host(reader, saved), node.lineno])


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
        reader.record.setdefault("files", []).append([callee, next(iter(given.values())), False, node.lineno])
        reader.record.setdefault("handed_files", []).append([callee, given, node.lineno])


def _on_host(reader, expr: ast.AST) -> bool:
    """Whether a saved value holds its tensors on the host: the state dict of a module moved
    there in place before (`net.cpu()`, also of its `.module`) or on the way (`net.cpu().state_dict()`),
    one offloaded by its configuration (`_offloaded`), a `.cpu()` result, a name bound to one
    of these, a dict of them, or either of two."""
    if isinstance(expr, ast.Call) and _offloaded(reader, expr):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in reader.hosted
    if isinstance(expr, ast.IfExp):
        return _on_host(reader, expr.body) and _on_host(reader, expr.orelse)
    if isinstance(expr, ast.DictComp):
        return _on_host(reader, expr.value)
    if isinstance(expr, ast.Dict):
        return bool(expr.values) and all(_on_host(reader, value) for value in expr.values)
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute) or expr.args:
        return False
    method, receiver = expr.func.attr, expr.func.value
    if method == "cpu":
        return True
    if method != "state_dict":
        return False
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "cpu":
        return True
    module = dotted(receiver)
    module = module.removesuffix(".module") if module is not None else None
    return module is not None and (module in reader.moved or module in reader.hosted)


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
    if isinstance(statement, ast.Assign):
        host = _on_host(reader, statement.value)
        offloads = _offloads(reader, statement.value)
        for target in statement.targets:
            name = dotted(target)
            if name is None:
                continue
            (reader.offload_configs.add if offloads and isinstance(target, ast.Name) else reader.offload_configs.discard)(name)
            reader.moved.discard(name)
            (reader.hosted.add if host and isinstance(target, ast.Name) else reader.hosted.discard)(name)


def _state_dicts(reader, expr: ast.AST | None, key: str | None, held: list) -> None:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict":
        source = reader.source(expr.func.value)
        if source is not None:
            held.append([key, source])
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


def _record_of(expr: ast.AST) -> tuple[list[str], bool] | None:
    """(keys, plain) of a dict literal with string keys."""
    if not isinstance(expr, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
        return None
    return [k.value for k in expr.keys], all(_plain(v) for v in expr.values)  # type: ignore[union-attr]


def _read_write(reader, node: ast.Call, callee: str) -> None:
    """A save of a dict record (`writes`): [callee, its keys, whether it is plain, line]."""
    saved = _argument(node, 0, "obj")
    found = reader.records.get(saved.id) if isinstance(saved, ast.Name) else _record_of(saved) if saved is not None else None
    if found is not None:
        reader.record.setdefault("writes", []).append([callee, sorted(set(found[0])), found[1], node.lineno])


def read_call(reader, node: ast.Call, callee: str) -> None:
    """What a call says about values: a save, a `find_unused_parameters` argument."""
    if callee.rpartition(".")[2] == "save":
        read_save(reader, node, callee)
        _read_write(reader, node, callee)

    elif "save" in callee.rpartition(".")[2].lower():
        _read_file_write(reader, node, callee)
    if "save" in callee.rpartition(".")[2].lower() and not reader._tests:
        reader.record.setdefault("plain_saves", []).append([callee, node.lineno])  # kept by `settle_save`
    if callee.rpartition(".")[2] in _SENDING_NAMES:
        sent = [reader.source(value) for value in _contained([*node.args, *(k.value for k in node.keywords)])]
        sent = [source for source in sent if source is not None]
        if sent:
            reader.record.setdefault("sends", []).append([callee, sent, node.lineno])
    for word in node.keywords:
        if word.arg == "find_unused_parameters" and not (isinstance(word.value, ast.Constant) and word.value.value is False):
            reader.record.setdefault("tolerant", []).append(node.lineno)


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
    if "plain_saves" not in reader.record:
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
    del reader.record["plain_saves"]


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
        if source is not None and source[0] == "call" and source not in reader.record.get("stores", ()):
            reader.record.setdefault("stores", []).append(source)


def _records(reader, statement: ast.stmt) -> None:
    """Dicts built key by key (`info = {}` ... `info["epoch"] = self.epoch`): name -> (keys, plain)."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name):
        found = _record_of(value) if not (isinstance(value, ast.Call) and dotted(value.func) == "dict" and not value.args and not value.keywords) else ([], True)
        if found is None:
            reader.records.pop(target.id, None)
        else:
            reader.records[target.id] = found
    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in reader.records:
        keys, plain = reader.records[target.value.id]
        key = target.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            reader.records[target.value.id] = ([*keys, key.value], plain and _plain(value))
        else:
            reader.records.pop(target.value.id)


def read_statement(reader, statement: ast.stmt) -> None:
    """Names bound to a path (`path = os.path.join(out, "best.pt")`), for `path_key`; call
    results kept beyond what the summary follows."""
    _stores(reader, statement)
    _records(reader, statement)
    _host(reader, statement)
    bound = []
    if isinstance(statement, ast.Assign):
        bound = [(target, path_key(statement.value, reader.paths)) for target in statement.targets]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):  # `with open(path, "wb") as f`: f is that file
        bound = [(item.optional_vars, _opened(item.context_expr, reader.paths)) for item in statement.items]
    _bind_paths(reader.paths, bound)


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


class Values:
    """Saves and wraps across the solved program (see the module doc)."""

    def __init__(self, program) -> None:
        self.program = program
        self._saves: list[tuple[str | None, str | None, str]] | None = None
        self._wraps: dict[tuple[str, str], list[tuple[str, bool]]] | None = None
        self._folders: dict[str, list[str]] | None = None  # folder -> its modules

    def _functions(self):
        program = self.program
        for module in list(program._order):
            summary = program._summaries.get(module)
            for key, function in (summary or {}).get("functions", {}).items():
                yield module, key, function

    def wrapper_saves(self) -> list[tuple[str | None, str | None, str]]:
        """(path key, dict key, where) of every save of a DDP model's state dict."""
        if self._saves is None:
            from ddplint.model.program import Origin

            program, found = self.program, []
            for module, key, function in self._functions():
                for callee, held, path, line in function.get("saves", ()):
                    if program._qualify(module, callee) not in TORCH_SAVE and callee not in TORCH_SAVE:
                        continue
                    for entry, source in held:
                        if isinstance(program.evaluate(module, key, source), Origin):
                            where = program.location(module, line)
                            paths = self._handed(module, key, function, path[6:], source) if path and path.startswith("param:") else [path]
                            found += [(handed, entry, where) for handed in paths]
            self._saves = sorted(set(found), key=lambda item: (item[2], str(item[0]), str(item[1])))
        return self._saves

    def _handed(self, module: str, key: str, function: dict, param: str, source: list) -> list[str | None]:
        """The files the calls of function `key` of `module` name for its parameter `param`
        (`save_checkpoint(model, args.ckpt)` for `def save_checkpoint(model, path)`), as path
        keys (None: one that names none, or a caller not read). Where the model whose state
        dict it saves is a parameter too, only the calls that hand it a DDP model count
        (`save_checkpoint(ema, ...)` beside it saves a plain one)."""
        from ddplint.model.program import Origin

        program, params = self.program, function["params"]
        model = source[1] if source[0] == "param" and source[1] in params else None
        found: list[str | None] = []
        if function["method"]:
            return [None]  # `self.save(model, path)`: the positions shift by one
        for caller, by, line in program.context.call_sites(module, key) or ():
            if by is None and model is not None:
                found.append(None)  # module code: not evaluated
                continue
            summary = program.summary(caller)
            record = ((summary or {}).get("functions", {}).get(by) if by else program.module_code(caller)) or {}
            if model is not None:
                passed = [keywords.get(model, args[params.index(model)] if params.index(model) < len(args) else None)
                          for _, args, keywords, at in record.get("calls", ()) if at == line]
                if not passed or not isinstance(program.evaluate(caller, by, passed[0]), Origin):
                    continue
            given = [g for _, g, at in record.get("handed_files", ()) if at == line]
            found.append(given[0].get(param, given[0].get(str(params.index(param)))) if given else None)
        return found or [None]

    def saves_on_any_rank(self, qualified: str, importer: str) -> str | None:
        """Where the function of another project module that `qualified` names (as `importer`
        imports it) calls `torch.save` under no `if`, saying nothing of ranks, itself or through
        such helpers it calls ("utils.py:8", see `settle_save`): every process that calls it
        writes the file. None otherwise; only modules that may save, by their text and imports
        (Project.may_save), are read."""
        program = self.program
        found = program.split(qualified, importer)
        if found is None or not found[1] or "." in found[1] or found[0] == importer:
            return None
        target = program.resolve(found[0], found[1], None) if program.project.may_save(found[0]) else None
        return self._saving(target[0], target[1], 0) if target is not None and not target[2] else None

    def _saving(self, module: str, key: str, depth: int) -> str | None:
        program = self.program
        if depth > 3 or not program.project.may_save(module):
            return None
        summary = program.summary(module)
        record = summary["functions"].get(key) if summary is not None else None
        for callee, line in (record or {}).get("plain_saves", ()):
            if (program._qualify(module, callee) or callee) in TORCH_SAVE or callee in TORCH_SAVE:
                return program.location(module, line)
            inner = program.resolve(module, callee, None)
            where = self._saving(inner[0], inner[1], depth + 1) if inner is not None and not inner[2] else None
            if where is not None:
                return where
        return None

    def saved_from_wrapper(self, path: str | None, key: str | None = None) -> str | None:
        """Where the program saves a DDP model's state dict to the file `path` (a path key)
        under a dict key that agrees with `key`, or None."""
        if path is None:
            return None
        for saved, entry, where in self.wrapper_saves():
            if saved == path and (entry is None or key is None or entry == key):
                return where
        return None

    def saved_on_host(self, module: str, path: str | None) -> str | None:
        """Where the program saves the file `path` (a path key) with its tensors on the host,
        when every call that may write that file in the modules of `module`'s folder (the
        scripts of one program: `train.py` writes what `evaluate.py` reads), their functions
        and their own code, is a `torch.save` of host tensors; None otherwise, and when one of
        those modules is not read."""
        if path is None:
            return None
        program, found = self.program, None
        if self._folders is None:
            self._folders = {}
            for name, relative in program.project.relpaths.items():
                self._folders.setdefault(posixpath.dirname(relative.replace("\\", "/")), []).append(name)
        for saver in sorted(self._folders.get(posixpath.dirname(program.project.relpaths[module].replace("\\", "/")), ())):
            summary, code = program.summary(saver), program.module_code(saver)
            if summary is None or code is None:
                return None
            for function in (code, *summary["functions"].values()):
                for callee, saved, host, line in function.get("files", ()):
                    if saved != path:
                        continue
                    if not host or (program._qualify(saver, callee) not in TORCH_SAVE and callee not in TORCH_SAVE):
                        return None
                    found = found or program.location(saver, line)
        return found

    def wraps(self) -> dict[tuple[str, str], list[tuple[str, bool]]]:
        """(module, class) of the project classes whose objects are wrapped in DDP -> (where,
        whether that wrap passes `find_unused_parameters` other than a literal False)."""
        if self._wraps is None:
            from ddplint.model.program import Instance

            program, found = self.program, {}
            for module, key, function in self._functions():
                tolerant = set(function.get("tolerant", ()))
                for callee, args, keywords, line in function["calls"]:
                    source = keywords.get("module") or (args[0] if args else None)
                    if source is None or not program._makes_ddp(module, callee):
                        continue
                    value = program.evaluate(module, key, source)
                    if isinstance(value, Instance):
                        entry = (program.location(module, line), line in tolerant)
                        found.setdefault((value.module, value.cls), [])
                        if entry not in found[(value.module, value.cls)]:
                            found[(value.module, value.cls)].append(entry)
            self._wraps = found
        return self._wraps

    def wrapped_classes(self, module: str) -> dict[str, list[tuple[str, bool]]]:
        """The classes of `module` whose objects the program wraps in DDP: name -> wraps."""
        return {cls: where for (found, cls), where in self.wraps().items() if found == module}

    def sent_at(self, module: str, callee: str) -> str | None:
        """Whether a call of `callee` in `module` pickles what it is given: spawn, Process,
        pickle.dump(s), torch.save, a queue's put (any receiver); its name for a message."""
        qualified = self.program._qualify(module, callee)
        last = callee.rpartition(".")[2]
        if qualified in _SENDS or callee in _SENDS or last == "Process" or (qualified is None and last in ("put", "put_nowait")):
            return last
        return None

    def result_fate(self, module: str, key: str, depth: int = 0) -> tuple[str, str] | None:
        """What the callers of function `key` of `module` do with what it returns: ("sent",
        "spawn at train.py:12") when one passes it (or returns it to a caller that passes it)
        to a call that pickles it; ("kept", "train.py:9") when every call in the project is
        found and each only reads it in place; None when unknown (no caller found, or one
        hands it on, stores it, or returns it further than followed)."""
        program, kept = self.program, []
        if depth > _MAX_CALLERS_DEPTH or program.summary(module) is None:
            return None
        for caller in [module, *program.importers_of(module)]:
            summary = program.summary(caller)
            if summary is None:
                return None
            for name, function in summary["functions"].items():
                for callee, line in function["invocations"]:
                    found = program.resolve(caller, callee, function["class"])
                    if found is None or found[:2] != (module, key):
                        continue
                    fate = self._fate_at(caller, name, function, ["call", callee, line], depth)
                    if fate is None or fate[0] == "sent":
                        return fate
                    kept.append(fate[1])
        project = program.project
        if set(project.texts) >= set(project.modules):
            return None  # a text linted alone: its callers elsewhere are unknown
        return ("kept", kept[0]) if kept else None

    def _fate_at(self, module: str, key: str, function: dict, result: list, depth: int) -> tuple[str, str] | None:
        """What function `key` does with `result` (a call's source in its summary)."""
        for callee, sent, line in function.get("sends", ()):
            if result in sent:
                where = self.sent_at(module, callee)
                if where is not None:
                    return "sent", f"{where} at {self.program.location(module, line)}"
        if result in function["returns"]:
            return self.result_fate(module, key, depth + 1)
        if result in function["sets"].values() and function["class"] and self._dataset(module, function["class"]):
            return "sent", f"the Dataset {function['class']} (stored at {self.program.location(module, result[2])})"
        if result in function["sets"].values() or result in function.get("stores", ()):
            return None
        for callee, args, keywords, line in function["calls"]:
            if (result in args or result in keywords.values()) and callee.rpartition(".")[2] not in _READING_CALLS:
                made = self.program.resolve(module, callee, function["class"])
                if made is not None and made[2] and self._kept_by_dataset(made, args, keywords, result):
                    return "sent", f"the Dataset {made[1].rpartition('.')[0]} at {self.program.location(module, line)}"
                return None
        return "kept", self.program.location(module, result[2])

    def _kept_by_dataset(self, made: tuple[str, str, bool], args: list, keywords: dict, result: list) -> bool:
        """The `__init__` `made` names is a Dataset's, and stores on `self` the parameter that
        gets `result` (`TranslationDataset(pairs, src_index)` keeping `self.src_index = src_index`)."""
        cls, _, method = made[1].rpartition(".")
        summary = self.program.summary(made[0])
        init = (summary or {}).get("functions", {}).get(made[1])
        if method != "__init__" or init is None or not self._dataset(made[0], cls):
            return False
        params = init["params"][1:]
        given = [params[i] for i, arg in enumerate(args) if arg == result and i < len(params)]
        given += [name for name, arg in keywords.items() if arg == result]
        return any(["param", name] in init["sets"].values() for name in given)

    def _dataset(self, module: str, cls: str) -> bool:
        """Class `cls` of `module` is a Dataset: a base named `Dataset` or `IterableDataset`, or
        a `__getitem__`. DataLoader workers receive it."""
        summary = self.program.summary(module)
        record = (summary or {}).get("classes", {}).get(cls)
        if record is None:
            return False
        bases = {base.rpartition(".")[2] for base in record["bases"]}
        return bool(bases & {"Dataset", "IterableDataset"}) or f"{cls}.__getitem__" in summary["functions"]  # type: ignore[index]

    def own_record(self, module: str, cls: str, keys: set[str]) -> str | None:
        """Where a method of class `cls` saves a dict of Python values with every key in `keys`
        (`save_checkpoint` writing `{"epoch": self.epoch, "memory": self.memory}`), when no
        method of the class saves another dict with those keys: what its own load reads back
        holds no tensors. None otherwise."""
        summary = self.program.summary(module) if keys else None
        found = None
        for key, function in (summary or {}).get("functions", {}).items():
            if function["class"] != cls:
                continue
            for callee, saved, plain, line in function.get("writes", ()):
                if not keys <= set(saved) or self.sent_at(module, callee) != "save":
                    continue
                if not plain:
                    return None
                found = found or self.program.location(module, line)
        return found

    def digest(self) -> list:
        return [
            [list(map(str, save)) for save in self.wrapper_saves()],
            sorted([*key, *map(str, entry)] for key, entries in self.wraps().items() for entry in entries),
        ]

