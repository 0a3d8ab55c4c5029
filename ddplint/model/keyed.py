"""Results a function keeps by a key drawn from each sample (ddplint.model.summary reads them
into `deduplicates`, `keyed_files` and `lists_files`): where a padded DistributedSampler
repeats a sample, the repeat lands on its original's entry or file and nothing counts twice.

- a dict stored by the sample's id: `for qid, ans in zip(batch["question_ids"], preds):
  results[qid] = ans`, the loop form of `results.update(zip(ids, preds))`, where the keys are
  drawn from what an enclosing loop yields (the batch), and the loop does not add each sample
  to its id's entry (`results[qid][0].append(score)`: a repeat is one more element);
- a file written per sample under a name made from the sample's own field (`np.savez(
  os.path.join(save_dir, names[i] + ".npz"), ...)` in `for i in range(len(names))`), which
  counts once only where the results are read back by listing the folder (`glob.glob`,
  `os.listdir`): files that are pictures beside an all-reduced metric clear nothing.
"""

from __future__ import annotations

import ast

from ddplint.prefilter.screens import dotted

# Calls writing one file, by the last part of their name (`np.savez`, `cv2.imwrite`, `torch.save`).
_WRITERS = frozenset({"save", "savez", "savez_compressed", "imwrite", "imsave", "save_image"})
# Calls listing a folder's files (`glob.glob`, `os.listdir`, `Path.glob`).
_LISTERS = frozenset({"glob.glob", "glob.iglob", "os.listdir", "os.scandir"})
_PATH_METHODS = frozenset({"glob", "rglob", "iterdir"})
_PATH_BUILDERS = frozenset({"join", "format"})


def read_keyed(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[bool, bool, bool]:
    """(stores a dict by sample id, writes a file per sample by its own name, lists a folder).
    A module's own code (the unnamed function of ddplint.model.summary.module_code) is read
    without the functions and classes it defines: their bodies do not run with it."""
    nodes = list(ast.walk(node) if node.name else _own_code(node))
    loops = [n for n in nodes if isinstance(n, (ast.For, ast.AsyncFor))]
    zipped = [  # `for qid, ans in zip(...)`
        loop for loop in loops
        if isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name)
        and isinstance(loop.iter, ast.Call) and dotted(loop.iter.func) == "zip" and loop.iter.args
    ]
    calls = [(n, dotted(n.func) or "") for n in nodes if isinstance(n, ast.Call)]
    writes = [call for call, callee in calls if callee.rpartition(".")[2] in _WRITERS]
    lists = any(callee in _LISTERS or (isinstance(call.func, ast.Attribute) and call.func.attr in _PATH_METHODS)
                for call, callee in calls)
    if not zipped and not writes:  # most functions: the name sets below are the costly part
        return False, False, lists
    indices = {loop.target.id for loop in loops if isinstance(loop.target, ast.Name) and _ranges(loop.iter)}
    ids, stored = set(), False  # keys zipped from what an enclosing loop yields: `for qid, ans in zip(batch["ids"], preds)`
    if zipped:
        yielded = _derived(nodes, {name for loop in loops if not _ranges(loop.iter) for name in _names(loop.target)}, set())
        for loop in zipped:
            key = loop.target.elts[0].id
            if not _reads(loop.iter.args[0], yielded - {key}, set()):
                continue
            ids.add(key)
            stored |= any(  # `results[qid] = ans` in that loop's body
                isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Name) and target.slice.id == key
                for statement in loop.body for n in ast.walk(statement) if isinstance(n, ast.Assign) for target in n.targets
            ) and not _accumulates(loop, key)
    if not writes:
        return stored, False, lists
    named = _derived(nodes, ids, indices)  # names made from a sample's own field: `names[i]`, its parts
    written = any(_path_from(arg, named, indices) for call in writes for arg in (*call.args, *(k.value for k in call.keywords)))
    return stored, written, lists


# Methods that add to what an entry holds (`results[qid][0].append(score)`).
_ADDING = frozenset({"append", "extend", "add", "update"})


def _accumulates(loop: ast.For | ast.AsyncFor, key: str) -> bool:
    """The loop adds each sample to what the entry of its key holds (`if q not in result:
    result[q] = [], []` then `result[q][0].append(s)`, or `result[q] += [s]`): a repeat is
    one more element of its id's entry, counted twice, not overwritten."""
    for node in (n for statement in loop.body for n in ast.walk(statement)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ADDING:
            held = node.func.value
        elif isinstance(node, ast.AugAssign):
            held = node.target
        else:
            continue
        while isinstance(held, ast.Subscript):
            if isinstance(held.slice, ast.Name) and held.slice.id == key:
                return True
            held = held.value
    return False


# Calls writing results out as written (`json.dump(dic, f)`, `f.write(line)`, `df.to_csv(path)`), by their last part.
DUMPERS = _WRITERS | frozenset({"dump", "write", "savetxt", "to_csv", "to_json", "to_parquet", "to_pickle"})


def file_step(callee: str, collective: str) -> str | None:
    """What a call (its callee as written, and the collective of torch.distributed it is, or
    "") does with files and the ranks: "write", "barrier", "list" (a folder), or None."""
    if collective == "barrier":
        return "barrier"
    if callee.rpartition(".")[2] in DUMPERS:
        return "write"
    return "list" if _lists(callee) else None


def gathered_through_files(steps) -> object | None:
    """Where the steps (ddplint.model.records.FileStep, in the order they run) read back the
    files the ranks wrote: a write every rank makes, then a barrier, then a listing of a folder
    (`os.listdir(result_dir)`), as when each rank dumps its results to `<epoch>.<rank>.json` and
    rank 0 reads every file back: the place of the listing, or None. A file only rank 0 writes
    holds no other rank's results."""
    wrote = barrier = False
    for step in steps:
        if step.kind == "write" and step.every_rank:
            wrote = True
        elif step.kind == "barrier" and wrote:
            barrier = True
        elif step.kind == "list" and barrier:
            return step.place
    return None


def _lists(callee: str) -> bool:
    return callee in _LISTERS or callee.rpartition(".")[2] in _PATH_METHODS


def _ranges(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and dotted(expr.func) == "range"


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _reads(expr: ast.AST, names: set[str], indices: set[str]) -> bool:
    """`expr` reads one of `names`, or an element of a sequence at a loop index (`names[i]`)."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id in names:
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and n.slice.id in indices:
            return True
    return False


def _own_code(node: ast.AST):
    """The nodes under `node` outside the functions and classes it defines."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(
            child for child in ast.iter_child_nodes(current)
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )


def _derived(nodes: list[ast.AST], seeds: set[str], indices: set[str]) -> set[str]:
    """`seeds` and the locals assigned from them (or from `seq[i]`) among `nodes`, to a fixed point."""
    flows = []  # per assignment: (names its value reads, whether it reads `seq[i]`, names it binds)
    for n in nodes:
        if isinstance(n, ast.Assign):
            read = list(ast.walk(n.value))
            flows.append((
                {r.id for r in read if isinstance(r, ast.Name)},
                any(isinstance(r, ast.Subscript) and isinstance(r.slice, ast.Name) and r.slice.id in indices for r in read),
                {name for t in n.targets for name in _names(t)},
            ))
    names = set(seeds)
    while True:
        more = {name for read, indexed, bound in flows if indexed or read & names for name in bound} - names
        if not more:
            return names
        names |= more


def _path_from(expr: ast.AST, named: set[str], indices: set[str]) -> bool:
    """A file name built from a sample's own field: a local made from one, or a join, format,
    concatenation or f-string reading one (`preds[i]`, the data written, is no name)."""
    if isinstance(expr, ast.Name):
        return expr.id in named
    if isinstance(expr, (ast.BinOp, ast.JoinedStr)):
        return _reads(expr, named, indices)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PATH_BUILDERS:
        return any(_path_from(arg, named, indices) or _reads(arg, named, indices) for arg in expr.args)
    return False
