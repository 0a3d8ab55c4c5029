from __future__ import annotations

import re

import libcst as cst

from ddplint.analyses.grad_mode import GradientMode
from ddplint.analyses.roles import evaluates
from ddplint.analyses.samplers import Construction, LoaderFlow, Ref
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import COMBINING_COLLECTIVES, DEDUPLICATING_METHODS, DISTRIBUTED_SAMPLER, LAUNCHERS, LIBRARY_LOADERS, TEST_SPLIT_SIZES
from ddplint.semantic.walk import NodeMemo, descendants, nodes_under

_MAX_DEPTH = 3
_NODES = re.compile(r"--nnodes[= \t]+['\"]?(\w+)")
_PER_NODE = re.compile(r"--nproc[_-]per[_-]node[= \t]+['\"]?(\w+)")  # torchrun's and torch.distributed.launch's
# Node counts of other launchers (DeepSpeed's, Accelerate's, a host file): not read here.
_OTHER_NODE_COUNT = re.compile(r"--(?:num_nodes|num_machines|hostfile)\b")


class PaddedEvalMetrics(Rule):
    """
    `DistributedSampler` gives every rank the same number of samples. When the dataset does not
    divide evenly by the number of ranks and `drop_last=False` (the default), it pads by
    repeating indices from the start of the dataset. For training that is harmless; for an
    evaluation set whose per-rank results are all-reduced or gathered into one metric, the
    repeated samples are counted twice and the metric is computed over more samples than the
    dataset has (pytorch/pytorch issue 25162; torchvision's reference scripts warn about it).

    Shown without a process group (tests/test_new_rule_symptoms.py): a 10-sample dataset over 4
    ranks with `shuffle=False` yields 12 indices, samples 0 and 1 twice; `drop_last=True`
    yields 8 and loses 2 instead.

    Fires when a `DistributedSampler(..., shuffle=False)` (an evaluation sampler) without
    `drop_last=True` feeds a DataLoader that is iterated by a loop without `backward()` in a
    function (or a same-module function it passes the loader to) that combines results after
    or in that loop with `all_reduce`, `all_gather(_object)`, `gather` or `reduce` (also where
    the loop is in a helper and the function that hands it the loader combines what it returns:
    `x = eval_dataset(model, loader)` ... `dist.all_gather(all_x, x)`), in a file
    that never trims to a length (`[:len(dataset)]`, `[:n]` after `n = len(dataset)`, or `[:size]` in
    a function of the file whose call passes `size` a length: `collect_results(results,
    len(dataset))` cutting the gathered parts to `ordered_results[:size]`). With
    the project model, the loader may also leave the function: a data builder returns it
    (`return train_loader, val_loader`, or keeps it on an object, also through the `super().__init__` of a base class) and a function of another
    module evaluates it and combines the results; the finding stays at the sampler and names the
    call that hands the loader on, the evaluation loop and the combine. A builder that passes its
    own parameter as drop_last (`DistributedSampler(ds, drop_last=is_train)`) pads for a call
    that passes it False (`prepare_dataset(path, is_train=False)`). The loader may be an entry
    of a dict literal (`evaluate(model, loaders["val"])`) or an element of a list that builders
    fill by `append` in loops over `zip(datasets, samplers)` (a `create_sampler(datasets,
    shuffles, ...)` helper and its loader twin), and a comprehension over it (`[model(x) for x, _ in loader]`) is a loop. There, an evaluating
    function (or a helper it calls) that trims to a length or places results by sample id
    clears it (filling an array, `array[:len(ids)] = ids`, trims nothing), as does one that
    keeps results by a key drawn from each sample: a dict stored by ids zipped from the batch
    (`for qid, ans in zip(batch["question_ids"], preds): results[qid] = ans`), or one file
    per sample named from its own field (`np.savez(os.path.join(d, names[i] + ".npz"), ...)`)
    that the evaluation reads back by listing the folder (`glob.glob`): a repeat overwrites its
    own entry or file (per-sample files nothing reads back, pictures, clear nothing; an entry each
    sample appends to, `result[qid][0].append(score)`, keeps the repeat). Results each rank
    writes to a file of its own, read back by listing the folder after `dist.barrier()`, are
    combined as by all_gather, also where the write, the barrier (a helper around it) and the
    listing are steps of project functions or of methods of an object handed to the evaluating
    function (`post.save()`, then `post.merge()`), the object being the one the evaluating call
    hands; a file only rank 0 writes holds no other rank's results. The loader may take the
    sampler from a local dict spread into it (`DataLoader(ds, **params)` after `params =
    {"sampler": DistributedSampler(ds, shuffle=False)}`). The sampler may be
    the project's own copy of DistributedSampler (a class whose `__iter__` pads its index list
    with its own start, `indices += indices[: self.total_size - len(indices)]`, a batch sampler that
    pads its list of batches so too, its arguments read by keyword; defined in another module or
    in the builder's own), made by a helper
    of another module (star-imported too), and reach the loader as `batch_sampler=` through a
    helper that returns `BatchSampler(sampler, ...)` (also where its other way re-wraps it for
    training, `IterationBasedBatchSampler(batches, iters)`; a script building that loader itself
    gets the finding, at its sampler); a builder that binds the returned loader in
    several branches of an `if`/`elif` chain has each branch's sampler judged on its own, and
    one called through a name bound to either of two (`loader_class = build_a if flag else
    build_b`) gives either one's loaders. An ignite engine run over the loader
    (`evaluator.run(val_loader)`, the engine built from a function with no backward,
    `Engine(inference)`) is such an evaluation where an ignite metric is attached to it
    (`Loss(...).attach(evaluator, "nll")`, or each of a dict of them): its compute all-reduces
    across ranks when the run completes. timm's `create_loader(..., distributed=...)` for
    evaluation (`is_training` left False) builds an OrderedDistributedSampler that pads the
    same way; the finding is then at that call. Not flagged: training samplers
    (shuffle left on, unless the loop over the loader is in a function named for evaluation or
    runs with gradients off, `with torch.no_grad():` around or in its body, and steps no
    optimizer) and training loops, `drop_last=True` (the sampler's: a DataLoader's drops only an
    incomplete last batch), results trimmed after the gather,
    a logger the evaluating function makes and all-reduces (`metric_logger.synchronize_between_processes()`)
    where nothing updates it between the loop's start and that call (its meters hold nothing of the
    evaluation; another combine of the function is judged instead),
    results placed by sample id (`index_copy_` or `unique` on gathered results, `results.update(zip(ids, preds))`, or `bank[idx] = feats` where `idx` holds the
    gathered ids, `idx = concat_all_gather(idx)`: a duplicate overwrites its own row; the ranks'
    gathered dicts merged into an empty dict by key, `for part in all_gather(detections):
    merged.update(part)` or `merged[qid] = ans` over `part.items()` or over `zip(gathered_ids,
    values)`: a repeat overwrites its original's entry), loaders whose results stay per rank, and a torchvision test split of known size
    (`datasets.MNIST(..., train=False)`, CIFAR-10/100, Fashion-MNIST, KMNIST: 10,000 images)
    bound in the sampler's function, where every documented launch of the script says its number
    of processes (`--nproc_per_node 2`, with `--nnodes`) and each divides that size. Other
    datasets' lengths the rule cannot know: one that divides evenly by the world size is not
    padded, and then the finding is moot (say so with a noqa). Hence level "warning".

    No fix: put the gathered predictions back in sample order, then trim them to
    `len(dataset)`: DistributedSampler deals position i of its (padded) index list to rank
    i % world_size, so interleave the ranks' parts (`[x for group in zip(*parts) for x in
    group][:len(dataset)]`, as mmcv's `collect_results` does). Concatenating the parts rank
    after rank and cutting the end is no fix: the pads sit at the end of several ranks' parts,
    so with 2 or more of them the cut drops real samples and keeps repeated ones (10 samples
    on 4 ranks: `[0, 4, 8, 1, 5, 9, 2, 6, 0, 3, 7, 1][:10]` loses 7 and counts 0 twice). Or
    shard the evaluation set without padding (e.g. a sampler yielding `range(rank,
    len(dataset), world_size)`) and all-reduce sums and counts.
    """

    code = "DDP022"
    # the sampler may come from another module's builder (`make_data_sampler(val_set, False, distributed)`,
    # which the screen cannot bind)
    # or be a project class that pads its indices (a Sampler subclass the screen sees as a Sampler)
    opened_by = unscreened_by = frozenset((ProjectFact.SAMPLER_BUILDER, ProjectFact.SAMPLER_CLASS))
    needs_ranks = True
    name = "padded-eval-metrics"
    frameworks = (Framework.DDP, Framework.TIMM)
    level = "warning"
    message = (
        "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), "
        "so the gathered or all-reduced metric counts some twice; trim the gathered results to "
        "len(dataset) in sample order or shard without padding"
    )
    # `also`: the combining collective that counts the padding, or the barrier after which the
    # ranks' files are read back; timm's create_loader builds the sampler inside.
    trigger = CallTrigger(DISTRIBUTED_SAMPLER | LIBRARY_LOADERS, also=(("all_reduce", "all_gather", "gather", "reduce", "barrier"),))
    analyses = (LoaderFlow, GradientMode)

    flagged_examples = (
        Flagged(
            # timm's create_loader(distributed=...) evaluates through an OrderedDistributedSampler, which pads.
            """
            import torch
            from timm.data import create_loader
            from torch import distributed as dist

            @torch.no_grad()
            def validate(model, loader):
                top1 = torch.zeros(2, device="cuda")
                for images, target in loader:
                    top1 += torch.stack([(model(images).argmax(-1) == target).sum(), torch.tensor(target.numel())])
                dist.all_reduce(top1)
                return top1[0] / top1[1]

            def main(cfg, model, dataset_eval):
                loader_eval = create_loader(dataset_eval, (3, 224, 224), cfg.batch_size, distributed=cfg.distributed)
                              ^
                print(validate(model, loader_eval))
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (the sampler is built inside timm.data.create_loader())"
            ),
        ),
        Flagged(
            # Filling an array up to a length (`array[:len(ids)] = ids`) trims no result.
            """
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def encode(ids, max_len):
                array = np.zeros(max_len, dtype=np.int64)
                array[:len(ids)] = ids
                return array

            @torch.no_grad()
            def evaluate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                                                     ^
                hits = torch.zeros(2)
                for x, y in loader:
                    hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
                dist.all_reduce(hits)
                return hits[0] / hits[1]
            """
        ),
        Flagged(
            # Counted by label, not placed by sample id: the duplicates count twice.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def per_class_hits(model, dataset, classes):
                sampler = DistributedSampler(dataset, shuffle=False)
                          ^
                hits = torch.zeros(classes)
                for x, y in DataLoader(dataset, sampler=sampler):
                    hits[y] += model(x).argmax(1) == y
                dist.all_reduce(hits)
                return hits
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, loader):
                correct = torch.zeros(2)
                for x, y in loader:
                    correct[0] += (model(x).argmax(1) == y).sum()
                    correct[1] += len(y)
                dist.all_reduce(correct)
                return (correct[0] / correct[1]).item()

            def main(model, val_set):
                val_sampler = DistributedSampler(val_set, shuffle=False)
                              ^
                val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)
                print(evaluate(model, val_loader))
            """
        ),
        Flagged(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler

            class Evaluator:
                def __init__(self, dataset, world_size, rank):
                    sampler = DistributedSampler(dataset, world_size, rank, shuffle=False, drop_last=False)
                              ^
                    self.loader = DataLoader(dataset, sampler=sampler)

                def run(self, model):
                    preds = []
                    for batch in self.loader:
                        preds.extend(model(batch).argmax(1).tolist())
                    everyone = [None] * dist.get_world_size()
                    dist.all_gather_object(everyone, preds)
                    return sum(everyone, [])
            """
        ),
        Flagged(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def reduce_mean(tensor, nprocs):
                total = tensor.clone()
                dist.all_reduce(total)
                return total / nprocs

            def validate(val_loader, model, nprocs):
                for images, target in val_loader:
                    acc = reduce_mean((model(images).argmax(1) == target).float().mean(), nprocs)

            def main(model, val_set, nprocs):
                val_sampler = DistributedSampler(val_set)  # shuffle left on, evaluated all the same
                              ^
                validate(DataLoader(val_set, sampler=val_sampler), model, nprocs)
            """
        ),
        Flagged(
            # A data builder: the flag set per mode is False on the sampler's path, the batch
            # sampler keeps the padded indices, and an evaluator object all-reduces its counts.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler

            def get_data_loader(dataset, batch_size, mode="train"):
                if mode == "train":
                    shuffle = True
                elif mode == "val":
                    shuffle = False
                if mode == "train":
                    sampler = RandomSampler(dataset)
                else:
                    sampler = DistributedSampler(dataset, shuffle=shuffle)
                              ^
                batches = BatchSampler(sampler, batch_size, drop_last=False)
                return DataLoader(dataset, batch_sampler=batches)

            class Confusion:
                def __init__(self, classes):
                    self.counts = torch.zeros(classes, classes)

                def update(self, preds, labels):
                    self.counts[labels, preds] += 1

                def compute(self):
                    dist.all_reduce(self.counts)
                    return self.counts.diag() / self.counts.sum(1)

            class MultiScale:
                def __init__(self, classes):
                    self.confusion = Confusion(classes)

                @torch.no_grad()
                def __call__(self, net, loader):
                    batches = enumerate(loader)
                    for _, (images, labels) in batches:
                        self.confusion.update(net(images).argmax(1), labels)
                    return self.confusion.compute()

            def eval_model(net, dataset, classes):
                loader = get_data_loader(dataset, 8, mode="val")
                evaluator = MultiScale(classes)
                return evaluator(net, loader)
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (its loader is handed to MultiScale.__call__() by the call at "
                "example.py:42, evaluated in a loop at example.py:35 and combined by all_reduce at example.py:25)"
            ),
        ),
        Flagged(
            # The evaluation loop written as a comprehension over the loader.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def evaluate(model, loader):
                hits = torch.stack([(model(x).argmax(1) == y).sum() for x, y in loader]).sum()
                dist.all_reduce(hits)
                return hits

            def main(model, val_set):
                loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
                                                     ^
                print(evaluate(model, loader))
            """
        ),
        Flagged(
            # Merged into a dict by a keyword update, not keyed by sample id: duplicates count twice.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                                                     ^
                preds = [model(x).argmax(1).tolist() for x in loader]
                everyone = [None] * dist.get_world_size()
                dist.all_gather_object(everyone, preds)
                stats = {}
                stats.update(predictions=sum(everyone, []))
                return stats
            """
        ),
        Flagged(
            # Loaders kept in a dict: the "val" entry is handed to the evaluation.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def evaluate(model, loader):
                hits = torch.cat([model(x).argmax(1) == y for x, y in loader]).float()
                total = torch.stack([hits.sum(), torch.tensor(float(len(hits)))])
                dist.all_reduce(total)
                return total[0] / total[1]

            def main(model, train_set, val_set):
                loaders = {
                    "train": DataLoader(train_set, sampler=DistributedSampler(train_set)),
                    "val": DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False)),
                                                       ^
                }
                print(evaluate(model, loaders["val"]))
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (its loader is handed to evaluate() by the call at example.py:17, "
                "evaluated in a loop at example.py:7 and combined by all_reduce at example.py:9)"
            ),
        ),
        Flagged(
            # Samplers and loaders built in lists by builders that zip them (create_sampler and
            # create_loader): the shuffle flag is decided per element, so the evaluation's name counts.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def create_sampler(datasets, shuffles, num_tasks, global_rank):
                samplers = []
                for dataset, shuffle in zip(datasets, shuffles):
                    samplers.append(DistributedSampler(dataset, num_replicas=num_tasks, rank=global_rank, shuffle=shuffle))
                                    ^
                return samplers

            def create_loader(datasets, samplers, batch_size):
                loaders = []
                for dataset, sampler in zip(datasets, samplers):
                    loaders.append(DataLoader(dataset, batch_size=batch_size, sampler=sampler))
                return loaders

            @torch.no_grad()
            def evaluate(model, loader):
                preds = []
                for x, _ in loader:
                    preds.extend(model(x).argmax(1).tolist())
                everyone = [None] * dist.get_world_size()
                dist.all_gather_object(everyone, preds)
                return everyone

            def main(model, train_set, val_set):
                samplers = create_sampler([train_set, val_set], [True, False], dist.get_world_size(), dist.get_rank())
                train_loader, val_loader = create_loader([train_set, val_set], samplers, 64)
                print(evaluate(model, val_loader))
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (its loader is handed to evaluate() by the call at example.py:29, "
                "evaluated in a loop at example.py:20 and combined by all_gather_object at example.py:23)"
            ),
        ),
        Flagged(
            # numpy's unique over the months of a test split places no result by sample id: the
            # all-reduced validation loss still counts the padded samples.
            """
            import numpy as np
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def validate(model, val_loader):
                for x, y in val_loader:
                    loss = (model(x) - y).abs().mean()
                    dist.all_reduce(loss)

            def main(model, val_set, months):
                sampler = DistributedSampler(val_set, shuffle=False)
                          ^
                validate(model, DataLoader(val_set, sampler=sampler))
                for month in np.unique(months):
                    print(month)
            """
        ),
        Flagged(
            # The loader reaches the object through its base class's `__init__`.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            class BaseTrainer:
                def __init__(self, model, val_data):
                    self.model = model
                    self.val_data = val_data

            class Trainer(BaseTrainer):
                def __init__(self, model, val_data):
                    super().__init__(model, val_data)

                def run_epoch(self):
                    for x, y in self.val_data:
                        loss = (self.model(x) - y).abs().mean()
                        dist.all_reduce(loss)

            def main(model, val_set):
                sampler = DistributedSampler(val_set, shuffle=False)
                          ^
                Trainer(model, DataLoader(val_set, sampler=sampler)).run_epoch()
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (evaluated by Trainer.run_epoch() in a loop at example.py:14, combined by "
                "all_reduce at example.py:16)",
            ),
        ),
        Flagged(
            # The loop is in a helper; the caller gathers what it returns (htdt/hyp_metric's get_emb).
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def eval_dataset(model, loader):
                xs = [model(x) for x, _ in loader]
                return torch.cat(xs)

            def get_emb(model, ds, world_size):
                sampler = DistributedSampler(ds)
                          ^
                loader = DataLoader(ds, batch_size=100, sampler=sampler)
                x = eval_dataset(model, loader)
                x = x.cuda()
                all_x = [torch.zeros_like(x) for _ in range(world_size)]
                dist.all_gather(all_x, x)
                return torch.cat(all_x)
            """
        ),
        Flagged(
            # Each rank writes its results to a file of its own, waits at a barrier (through a
            # helper) and rank 0 lists the folder and reads every file back, all in methods of an
            # object the caller hands the evaluation; the sampler reaches the loader through `**params`.
            """
            import glob
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def synchronize():
                if dist.is_initialized():
                    dist.barrier()

            class PostProcessor:
                def __init__(self, out, rank):
                    self.out, self.rows = out, []
                    self.file = f"{out}/pred.csv.rank.{rank}"

                def update(self, scores, ids):
                    self.rows += list(zip(ids.tolist(), scores.tolist()))

                def save(self):
                    with open(self.file, "w") as f:
                        f.write("\\n".join(f"{i},{s}" for i, s in self.rows))
                    synchronize()

                def merge(self):
                    rows = []
                    for name in glob.glob(f"{self.out}/pred.csv.rank.*"):
                        with open(name) as f:
                            rows += f.read().splitlines()
                    return rows

            @torch.no_grad()
            def validate(loader, model, post):
                for x, ids in loader:
                    post.update(model(x), ids)
                post.save()
                if dist.get_rank() == 0:
                    return post.merge()

            def main(args, model, val_set):
                if args.dist:
                    params = {"sampler": DistributedSampler(val_set, shuffle=False)}
                                         ^
                else:
                    params = {"shuffle": False}
                loader = DataLoader(val_set, batch_size=8, **params)
                print(validate(loader, model, PostProcessor(args.out, args.rank)))
            """,
            messages=(
                "evaluation DistributedSampler pads its shards by repeating samples (drop_last=False), so the "
                "gathered or all-reduced metric counts some twice; trim the gathered results to len(dataset) in sample order or "
                "shard without padding (its loader is handed to validate() by the call at example.py:44, "
                "evaluated in a loop at example.py:32 and combined by the ranks' files, listed after a barrier, "
                "at example.py:25)"
            ),
        ),
        Flagged(
            # A helper that cuts to the count its caller passes, here not a length: the top scores of
            # the gathered results still hold the padded repeats.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def top(scores, k):
                return sorted(scores, reverse=True)[:k]

            def evaluate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                                                     ^
                scores = [float(model(x)) for x in loader]
                parts = [None] * dist.get_world_size()
                dist.all_gather_object(parts, scores)
                return top(sum(parts, []), 5), len(dataset)
            """
        ),
        Flagged(
            # Each rank's dict of results flattened into a list after the gather: the padded
            # repeat's entry is kept beside its original's.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def test(model, dataset):
                sampler = DistributedSampler(dataset, shuffle=False)
                          ^
                detections = {}
                for batch in DataLoader(dataset, batch_size=4, sampler=sampler):
                    detections.update({meta["token"]: out for meta, out in zip(batch["meta"], model(batch["x"]))})
                parts = [None] * dist.get_world_size()
                dist.all_gather_object(parts, detections)
                return dataset.evaluation([det for part in parts for det in part.values()])
            """
        ),
    )
    clean_examples = (
        Clean(
            # Each rank's results kept by the sample's token and the gathered dicts merged into one
            # by key: a padded repeat overwrites its original's entry.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def all_gather(data):
                parts = [None] * dist.get_world_size()
                dist.all_gather_object(parts, data)
                return parts

            @torch.no_grad()
            def test(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                detections = {}
                for batch in loader:
                    for output in model(batch):
                        detections.update({output["token"]: output})
                predictions = {}
                for part in all_gather(detections):
                    predictions.update(part)
                return dataset.evaluation(predictions)
            """
        ),
        Clean(
            # The same merge written out on rank 0 (`merged[qid] = ans` over `answered.items()`), and
            # gathered sample ids zipped with their values into a dict: one entry per sample.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            @torch.no_grad()
            def predict(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                answers = {}
                for batch in loader:
                    answers.update({qid: ans for qid, ans in zip(batch["ids"], model(batch["x"]))})
                everyone = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
                dist.gather_object(answers, everyone, dst=0)
                if everyone is None:
                    return None
                merged = {}
                for answered in everyone:
                    for qid, ans in answered.items():
                        if qid not in merged:
                            merged[qid] = ans
                return merged

            @torch.no_grad()
            def validate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                keys, values = [], []
                for batch in loader:
                    keys.extend(batch["index"].tolist())
                    values.extend(model(batch["x"]).tolist())
                keys = torch.tensor(keys)
                values = torch.tensor(values)
                gathered_keys = [torch.zeros_like(keys) for _ in range(dist.get_world_size())]
                gathered_values = [torch.zeros_like(values) for _ in range(dist.get_world_size())]
                dist.gather(keys, gather_list=gathered_keys, dst=0)
                dist.gather(values, gather_list=gathered_values, dst=0)
                unique = {}
                for key, value in zip(torch.cat(gathered_keys).tolist(), torch.cat(gathered_values).tolist()):
                    if key not in unique:
                        unique[key] = value
                return sum(unique.values()) / len(unique)
            """
        ),
        Clean(
            # The gathered parts cut by a helper to the length its caller passes (mmdetection's
            # collect_results(results, len(dataset))): the padding is dropped.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def collect_results(part, size):
                parts = [None] * dist.get_world_size()
                dist.all_gather_object(parts, part)
                ordered = [r for chunk in zip(*parts) for r in chunk]
                return ordered[:size]

            @torch.no_grad()
            def test(model, loader):
                results = [model(x).argmax(1).tolist() for x in loader]
                return collect_results(results, len(loader.dataset))

            def main(model, dataset):
                print(test(model, DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))))
            """
        ),
        Clean(
            # The helper's results stay per rank: the caller's collective combines something else.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def eval_dataset(model, loader):
                xs = [model(x) for x, _ in loader]
                return torch.cat(xs)

            def get_emb(model, ds, steps):
                sampler = DistributedSampler(ds)
                loader = DataLoader(ds, batch_size=100, sampler=sampler)
                x = eval_dataset(model, loader)
                dist.all_reduce(steps)
                return x
            """
        ),
        Clean(
            # The gathered sample ids made unique: each padded duplicate is dropped with its id.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset):
                sampler = DistributedSampler(dataset, shuffle=False)
                ids, hits = [], []
                for idx, x, y in DataLoader(dataset, sampler=sampler):
                    ids.append(idx)
                    hits.append(model(x).argmax(1) == y)
                outputs = [None] * dist.get_world_size()
                dist.all_gather_object(outputs, list(zip(torch.cat(ids).tolist(), torch.cat(hits).tolist())))
                seen = torch.tensor([pair for part in outputs for pair in part])
                return seen[:, 0].unique(return_inverse=True)
            """
        ),
        Clean(
            # Without `distributed=`, timm's create_loader builds no DistributedSampler: every rank sees it all.
            """
            import torch
            import torch.distributed as dist
            import timm.data

            def evaluate(model, loader):
                hits = torch.zeros(1)
                for x, y in loader:
                    hits += (model(x).argmax(1) == y).sum()
                dist.all_reduce(hits)
                return hits

            def run(model, val_set):
                return evaluate(model, timm.data.create_loader(val_set, (3, 224, 224), 32, is_training=False))
            """
        ),
        Clean(
            # Features written by their gathered sample ids: a padded duplicate overwrites its own row.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def concat_all_gather(tensor):
                out = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
                dist.all_gather(out, tensor)
                return torch.cat(out)

            def extract(model, dataset, dim):
                sampler = DistributedSampler(dataset, shuffle=False)
                bank = torch.zeros(len(dataset), dim)
                for idx, x in DataLoader(dataset, sampler=sampler):
                    feats = concat_all_gather(model(x))
                    idx = concat_all_gather(idx)
                    bank[idx] = feats
                return bank
            """
        ),
        Clean(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset):
                sampler = DistributedSampler(dataset, shuffle=False)
                loader = DataLoader(dataset, sampler=sampler)
                preds = [model(x) for x in loader]
                out = [None] * dist.get_world_size()
                dist.all_gather_object(out, preds)
                merged = [p for pair in zip(*out) for p in pair][: len(dataset)]
                return merged
            """
        ),
        Clean(
            # Gathered in rank order, then cut to the dataset's length: the padding is dropped.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset, world_size):
                preds = []
                for x in DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False)):
                    preds.append(model(x).argmax(1))
                preds = torch.cat(preds)
                parts = [torch.zeros_like(preds) for _ in range(world_size)]
                dist.all_gather(parts, preds)
                n = len(dataset)
                return torch.stack(parts, dim=1).flatten()[:n]
            """
        ),
        Clean(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def train(model, train_set, val_set):
                sampler = DistributedSampler(train_set)
                loader = DataLoader(train_set, sampler=sampler)
                for x, y in loader:
                    loss = model(x, y)
                    dist.all_reduce(loss)
                exact = DistributedSampler(val_set, shuffle=False, drop_last=True)
                for x, y in DataLoader(val_set, sampler=exact):
                    dist.all_reduce(model(x, y))
                local = DistributedSampler(val_set, shuffle=False)
                for x, y in DataLoader(val_set, sampler=local):
                    print(model(x, y))

            def train_in_order(model, train_set):
                sampler = DistributedSampler(train_set, shuffle=False)
                for x, y in DataLoader(train_set, sampler=sampler):
                    loss = model(x, y)
                    loss.backward()
                    dist.all_reduce(loss.detach())
            """
        ),
        Clean(
            # The same builder sharding the evaluation set exactly: drop_last is True on its path.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler

            def get_data_loader(dataset, batch_size, mode="train"):
                if mode == "train":
                    shuffle = True
                    drop_last = False
                elif mode == "val":
                    shuffle = False
                    drop_last = True
                if mode == "train":
                    sampler = RandomSampler(dataset)
                else:
                    sampler = DistributedSampler(dataset, shuffle=shuffle, drop_last=drop_last)
                batches = BatchSampler(sampler, batch_size, drop_last=False)
                return DataLoader(dataset, batch_sampler=batches)

            class MultiScale:
                def __init__(self, classes):
                    self.counts = torch.zeros(classes, classes)

                @torch.no_grad()
                def __call__(self, net, loader):
                    for _, (images, labels) in enumerate(loader):
                        self.counts[labels, net(images).argmax(1)] += 1
                    dist.all_reduce(self.counts)
                    return self.counts.diag() / self.counts.sum(1)

            def eval_model(net, dataset, classes):
                loader = get_data_loader(dataset, 8, mode="val")
                evaluator = MultiScale(classes)
                return evaluator(net, loader)
            """
        ),
        Clean(
            # Gathered (id, prediction) pairs merged into a dict by sample id: a padded duplicate overwrites its entry.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                ids, preds = [], []
                for idx, x in loader:
                    ids.extend(idx.tolist())
                    preds.extend(model(x).argmax(1).tolist())
                everyone = [None] * dist.get_world_size()
                dist.all_gather_object(everyone, (ids, preds))
                results = {}
                for rank_ids, rank_preds in everyone:
                    results.update(zip(rank_ids, rank_preds))
                return results
            """
        ),
        Clean(
            # Comprehensions over loaders that are not padded evaluations: drop_last=True, a training pass.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def evaluate(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False, drop_last=True))
                hits = torch.stack([(model(x).argmax(1) == y).sum() for x, y in loader]).sum()
                dist.all_reduce(hits)
                return hits

            def train(model, dataset):
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
                losses = torch.stack([model(x, y).backward() or model(x, y).detach() for x, y in loader])
                dist.all_reduce(losses)
                return losses
            """
        ),
        Clean(
            # Loaders in a dict whose evaluated entries do not pad: drop_last=True, a sampler of every sample.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler

            @torch.no_grad()
            def evaluate(model, loader):
                correct, seen = 0, 0
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum().item()
                    seen += len(y)
                totals = torch.tensor([correct, seen])
                dist.all_reduce(totals)
                return totals[0] / totals[1]

            def main(model, optimizer, train_set, val_set):
                loaders = {
                    "train": DataLoader(train_set, sampler=DistributedSampler(train_set, shuffle=False)),
                    "val": DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True)),
                    "calib": DataLoader(val_set, sampler=SequentialSampler(val_set)),
                }
                for x, y in loaders["train"]:
                    optimizer.zero_grad()
                    model(x, y).backward()
                    optimizer.step()
                print(evaluate(model, loaders["val"]), evaluate(model, loaders["calib"]))
            """
        ),
        Clean(
            # Only rank 0 writes its file before the barrier: what is listed after it holds no other
            # rank's results, and nothing is combined.
            """
            import glob
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def synchronize():
                if dist.is_initialized():
                    dist.barrier()

            class PostProcessor:
                def __init__(self, out):
                    self.out, self.rows = out, []

                def update(self, scores):
                    self.rows += scores.tolist()

                def save(self):
                    if dist.get_rank() == 0:
                        with open(f"{self.out}/pred.csv", "w") as f:
                            f.write(str(self.rows))
                    synchronize()

                def listing(self):
                    return glob.glob(f"{self.out}/*.csv")

            @torch.no_grad()
            def validate(loader, model, post):
                for x, _ in loader:
                    post.update(model(x))
                post.save()
                return post.listing()

            def main(args, model, val_set):
                params = {"sampler": DistributedSampler(val_set, shuffle=False)}
                loader = DataLoader(val_set, batch_size=8, **params)
                print(validate(loader, model, PostProcessor(args.out)))
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.flow = model.get(LoaderFlow)
        self.gradients = model.get(GradientMode)
        self._gradients_off: set[int] = set()  # loops (by node id) run with gradients off, or whose body turns them off
        # Per function (by node id, None: the module): when, in walk order, it combines results.
        self._combining: dict[int | None, list[int]] = {}
        self._order: dict[int, int] = {}  # loops by node id: when the walk entered them
        self._clock = 0
        self._trimmed = False
        self._gathered: set[str] = set()  # names bound to a combining call's result
        self._lengths: set[str] = set()  # names bound to `len(...)`: `n = len(dataset)` ... `[:n]`
        self._stores: set[int] = set()  # slices assigned to (`array[:len(ids)] = ids`), by node id
        # Merging gathered parts by key: names bound to an empty dict (`merged = {}`), loop names
        # bound to one rank's part (`for part in gathered`), and loop names bound to a key of
        # the gathered results (`for qid, ans in part.items()`, `for key, value in zip(ids, ...)`)
        self._dicts: set[str] = set()
        self._parts: set[str] = set()
        self._keys: set[str] = set()
        # `ordered[:size]` in a module function `collect(part, size)`: (function, position) and
        # (function, name) of the parameter; and the same of the arguments calls pass `len(...)` to
        self._cut_by: set[tuple[str, int | str]] = set()
        self._given_length: set[tuple[str, int | str]] = set()
        # (function, name) -> the calls whose results the name holds (`x, y = eval_dataset(model, loader)`)
        self._results: dict[tuple[int | None, str], set[int]] = {}
        self._results_combined: set[int] = set()  # calls (by node id) whose results a collective combines
        # (function, name) -> the size of the dataset split it is bound to (`datasets.MNIST(..., train=False)`)
        self._split_sizes: dict[tuple[int | None, str], int] = {}
        # Calls that hand something to a function the project model may follow:
        # (callee, function key, class, positional refs, keyword refs, the call)
        self._handed: list[tuple[str, str | None, str | None, list, dict, cst.Call]] = []

    def _function(self) -> int | None:
        frame = self.model.function
        return id(frame.node) if frame is not None else None

    def visit_Call(self, node: cst.Call) -> None:
        self._clock += 1
        if isinstance(node.func, cst.Name):  # `collect_results(results, len(dataset))`
            positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
            named = {arg.keyword.value: arg for arg in node.args if arg.keyword is not None}
            for where, arg in (*enumerate(positional), *named.items()):
                if _length(arg.value, self._lengths):
                    self._given_length.add((node.func.value, where))
        if _keys_by_zip(node):  # `results.update(zip(ids, preds))`: a padded duplicate overwrites its id's entry
            self._trimmed = True
        if self._combines(node):  # also `metric_logger.synchronize_between_processes()`
            self._combining.setdefault(self._function(), []).append(self._clock)
            for arg in node.args:
                self._results_combined |= self._results_read(arg.value)
            if "gather" in (self.model.qualified(node.func) or "") and node.args and isinstance(node.args[0].value, cst.Name):
                self._gathered.add(node.args[0].value.value)  # `dist.all_gather(outputs, preds)` fills `outputs`
            self._gathered |= _gather_list(node, self.model.qualified(node.func) or "")
        if self._merges_part(node):  # `merged.update(part)`: a padded repeat overwrites its original's entry
            self._trimmed = True
        if self._places_by_id(node):
            self._trimmed = True
        if self.model.project is not None and self.model.qualified(node.func) not in COMBINING_COLLECTIVES and (
            callee := self.flow.project_callee(node.func)
        ) is not None:
            key, cls = self.flow.place()
            positional = [self.flow.ref(a.value) for a in node.args if a.keyword is None and not a.star]
            keywords = {a.keyword.value: self.flow.ref(a.value) for a in node.args if a.keyword is not None}
            if any(positional) or any(keywords.values()):
                self._handed.append((callee, key, cls, positional, keywords, node))

    def _combines(self, node: cst.Call) -> bool:
        """A collective, or a project helper that runs one (`concat_all_gather(x)`)."""
        if self.model.qualified(node.func) in COMBINING_COLLECTIVES:
            return True
        project, callee = self.model.project, self.flow.project_callee(node.func)
        return project is not None and callee is not None and project.combines(*self.flow.place(), callee) is not None

    def _merges_part(self, node: cst.Call) -> bool:
        """`merged.update(part)`, `merged` an empty dict and `part` one rank's gathered results
        (`for part in all_gather(detections)`): each rank's results merged by their keys."""
        func = node.func
        return (
            isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Name)
            and func.value.value in self._dicts and len(node.args) == 1 and node.args[0].keyword is None
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in self._parts
        )

    def _bind_loop(self, node: cst.For) -> None:
        """The names a loop over gathered results binds: one rank's part (`for part in
        gathered`), or a key of them (`for qid, ans in part.items()`; `for key, value in
        zip(gathered_ids, ...)`, the first of the zipped sequences)."""
        iterated, target = node.iter, node.target
        if (isinstance(iterated, cst.Name) and iterated.value in self._gathered) or (
            isinstance(iterated, cst.Call) and self._combines(iterated)
        ):
            self._parts |= set(_bound_names(target))
            return
        if not isinstance(iterated, cst.Call) or not isinstance(target, (cst.Tuple, cst.List)) or not target.elements:
            return
        first = target.elements[0].value
        func = iterated.func
        if not isinstance(first, cst.Name):
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "items" and not iterated.args and (
            isinstance(func.value, cst.Name) and func.value.value in self._parts
        ):
            self._keys.add(first.value)
        elif isinstance(func, cst.Name) and func.value == "zip" and iterated.args and self._reads_gathered(iterated.args[0].value):
            self._keys.add(first.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        """`idx = concat_all_gather(idx)` ... `bank[idx] = feats`: results placed by their
        gathered sample ids, where a padded duplicate overwrites its own row; `merged[qid] = ans`
        with `qid` a key of the gathered results and `merged` an empty dict: merged by key."""
        empty = isinstance(node.value, cst.Dict) and not node.value.elements
        empty |= isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name) and node.value.func.value == "dict" and not node.value.args
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (self._dicts.add if empty else self._dicts.discard)(target.target.value)
        if (isinstance(node.value, cst.Call) and self._combines(node.value)) or self._reads_gathered(node.value):
            self._gathered |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
        results = self._results_read(node.value) | ({id(node.value)} if isinstance(node.value, cst.Call) else set())
        for target in node.targets:  # `x, y = eval_dataset(model, loader)`, then `y = y.cuda()`
            for name in _bound_names(target.target):
                self._results[(self._function(), name)] = results
        if _length(node.value, set()):
            self._lengths |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
        size = self._test_split_size(node.value)
        if size is not None and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._split_sizes[(self._function(), node.targets[0].target.value)] = size
        for target in node.targets:
            stored = target.target
            if isinstance(stored, cst.Subscript):  # `mask[:len(ids)] = 1` fills an array: no trim
                self._stores.update(id(element.slice) for element in stored.slice)
            if isinstance(stored, cst.Subscript) and len(stored.slice) == 1 and isinstance(stored.slice[0].slice, cst.Index):
                index = stored.slice[0].slice.value
                self._trimmed |= isinstance(index, cst.Name) and index.value in self._gathered
                self._trimmed |= (  # `merged[qid] = ans`, not `merged[qid] = merged.get(qid, 0) + ans`
                    isinstance(index, cst.Name) and index.value in self._keys and isinstance(stored.value, cst.Name)
                    and stored.value.value in self._dicts and stored.value.value not in _names_read(node.value)
                )

    def _results_read(self, expr: cst.BaseExpression) -> set[int]:
        """The calls whose results `expr` reads, by the names of this function holding them."""
        function = self._function()
        return {call for name in _names_read(expr) for call in self._results.get((function, name), ())}

    def visit_For(self, node: cst.For | cst.While | cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        self._clock += 1
        self._order[id(node)] = self._clock
        if self.gradients.gradients_off:
            self._gradients_off.add(id(node))
        if isinstance(node, cst.For):
            self._bind_loop(node)

    def visit_With(self, node: cst.With) -> None:
        loops = self.model.loops
        if loops and self.gradients.is_no_grad_block(node):  # `for x in loader: with torch.no_grad(): model(x)`
            self._gradients_off.add(id(loops[-1]))

    visit_While = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_For

    def _places_by_id(self, node: cst.Call) -> bool:
        """`torch.unique(ids)`, `bank.index_copy_(0, idx, feats)` on gathered results: placed by
        sample id, a padded duplicate lands on its original (`np.unique(months)` of a data
        split, which reads no gathered result, places nothing)."""
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name not in DEDUPLICATING_METHODS:
            return False
        receiver = [func.value] if isinstance(func, cst.Attribute) else []
        return any(self._reads_gathered(expr) for expr in (*receiver, *(arg.value for arg in node.args)))

    def _reads_gathered(self, expr: cst.BaseExpression) -> bool:
        if not self._gathered:  # asked of every assignment: nothing gathered yet, nothing to read
            return False
        return not self._gathered.isdisjoint(_names_read(expr))

    def visit_Slice(self, node: cst.Slice) -> None:
        if id(node) in self._stores:
            return
        upper = node.upper
        if isinstance(upper, cst.Call) and _length(upper, set()):
            self._trimmed = True
        elif upper is not None and node.lower is None and _length(upper, self._lengths):
            self._trimmed = True  # `[:n]`; `indices[split:n]` is a split of the dataset
        elif isinstance(upper, cst.Name) and node.lower is None:
            self._cut_by |= _cut_parameter(self.model.function, upper.value)

    def _trims_by_callers(self) -> bool:
        """A module function cuts to its parameter (`return ordered[:size]`) and a call passes
        it a length (`collect_results(results, len(dataset))`): that call's results are trimmed."""
        return not self._cut_by.isdisjoint(self._given_length)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._trimmed or self._trims_by_callers():
            return
        unseen = []  # padded samplers made here whose loaders are not evaluated here
        for sampler in (*self.flow.of_kind("sampler"), *self.flow.of_kind("padding_sampler")):
            if sampler.elsewhere is not None and (sampler.drops_last or self._reported_where_made(sampler.elsewhere)):
                continue  # made exact there, or reported there
            if sampler.by_plugin:  # its sampler's padding is not read off the call; not judged yet
                continue
            drop_last = _drop_last(sampler)
            if drop_last is not None and not (isinstance(drop_last.value, cst.Name) and drop_last.value.value == "False"):
                if isinstance(drop_last.value, cst.Name) and sampler.elsewhere is None:
                    unseen.append(sampler)  # `drop_last=is_train`: the model knows which calls of the builder pad
                continue
            if self._splits_evenly(sampler):
                continue
            for loader, _ in self.flow.loaders_of(sampler):
                where = self._combined(loader, sampler.shuffle_is_false)
                if where is not None:
                    self.report(sampler.node, self.message + where + self._built_inside(sampler))
                    break
            else:
                if sampler.elsewhere is None:
                    unseen.append(sampler)
        self._evaluated_elsewhere(unseen)

    def _test_split_size(self, value: cst.BaseExpression) -> int | None:
        """The size of a torchvision test split the expression builds (`train=False`), or None."""
        if not isinstance(value, cst.Call):
            return None
        size = TEST_SPLIT_SIZES.get(self.model.qualified(value.func) or "")
        train = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "train"), None)
        return size if isinstance(train, cst.Name) and train.value == "False" else None

    def _splits_evenly(self, sampler: Construction) -> bool:
        """The sampler shards a split of known size that the number of processes of every
        documented run divides: DistributedSampler adds no repeated sample."""
        dataset = argument_for(sampler.node, DISTRIBUTED_SAMPLER, "dataset")
        project = self.model.project
        if dataset is None or not isinstance(dataset.value, cst.Name) or project is None:
            return False
        function = id(sampler.function.node) if sampler.function.node is not None else None
        size = self._split_sizes.get((function, dataset.value.value))
        worlds = documented_world_sizes(project) if size is not None else None
        return bool(worlds) and all(size % world == 0 for world in worlds)  # type: ignore[operator]

    def _built_inside(self, sampler: Construction) -> str:
        """A note where a library call builds the sampler (timm's create_loader)."""
        qualified = self.model.qualified(sampler.node.func)
        return f" (the sampler is built inside {qualified}())" if qualified in LIBRARY_LOADERS else ""

    def _reported_where_made(self, where) -> bool:
        """A sampler a builder of another module makes (at the Place `where`), which is reported there (see below)."""
        return where.line in self.model.project.evaluated_samplers(where)  # type: ignore[union-attr]

    def _evaluated_elsewhere(self, samplers: list[Construction]) -> None:
        """A data builder returns the loader (`return train_loader, val_loader`) and another
        function, here or in another module, evaluates it and combines the results: the project
        model knows where, by the line the sampler is made on."""
        project = self.model.project
        evaluated = project.evaluated_samplers() if project is not None and samplers else {}
        if not evaluated:
            return
        spans = self.model.spans([sampler.node for sampler in samplers])
        for sampler in samplers:
            found = evaluated.get(spans[id(sampler.node)][0][0])
            if found is not None:
                self.report(sampler.node, self.message + found.describe())

    def _combined(self, loader: Construction, ordered: bool) -> str | None:
        """Whether the loader's results are combined across ranks after an evaluation loop:
        "" when here, a note naming the function of another module that does it, or None.
        A sampler left shuffling counts only in a function named for evaluation."""
        # A collective in the loop over the loader, or after it in the same function, or on
        # what a call that hands the loader to the looping function returns (`x, y =
        # eval_dataset(model, loader)` ... `all_gather(all_x, x)`).
        for function, loop, calls in self._iterating(self.flow.refs(loader)):
            named = function.node is not None and evaluates(function.node.name.value)
            if _trains(loop.node) or not (ordered or named or self._infers(loop.node)):
                continue  # a training loop: repeated samples only reweight a few gradients
            key = id(function.node) if function.node is not None else None
            start = self._order.get(id(loop.node), 0)
            if any(when > start for when in self._combining.get(key, ())):
                return ""
            if any(call.node is not None and id(call.node) in self._results_combined for call in calls):
                return ""
        refs = self.flow.refs(loader)
        for callee, key, cls, positional, keywords, call in self._handed:
            handed = [(i, None) for i, ref in enumerate(positional) if ref in refs]
            handed += [(None, word) for word, ref in keywords.items() if ref in refs]
            line = self.model.spans([call])[id(call)][0][0] if handed else None  # the objects this call hands count
            for index, word in handed:
                found = self.model.project.evaluation(key, cls, callee, index, word, line)  # type: ignore[union-attr]
                if found is not None and (ordered or evaluates(found.function.rpartition(".")[2])):
                    return f" (evaluated by {found.function}() in a loop at {found.loop}, combined by {found.combine})"
        return None

    def _infers(self, loop: cst.CSTNode) -> bool:
        """The loop runs with gradients off (inside `torch.no_grad()`, or its body turns them
        off) and steps no optimizer: an evaluation, whatever its function's name."""
        return id(loop) in self._gradients_off and not any(
            isinstance(node.func, cst.Attribute) and node.func.attr.value == "step" for node in nodes_under(loop, cst.Call)
        )

    def _iterating(self, targets: set[Ref]) -> list:
        """(function, loop, calls) for each loop over the loader: here, or in a same-module
        function it is passed to (`calls`: the calls that handed it there, outermost first)."""
        found = []
        pending = [(function, targets, ()) for function in (self.flow.module, *self.flow.functions.values())]
        while pending:
            function, refs, calls = pending.pop()
            found.extend((function, loop, calls) for loop in function.loops if loop.iterated & refs)
            if len(calls) < _MAX_DEPTH:
                for call in function.calls:
                    resolved = self.flow.callee_targets(call, refs)
                    if resolved is not None and resolved[1] != refs:
                        pending.append((resolved[0], resolved[1], (*calls, call)))
        return found


def documented_world_sizes(view) -> frozenset[int] | None:
    """How many processes each documented run of the script `view` (its project view) starts:
    one number per command that runs it, its processes per node times its `--nnodes`; None
    where no launch command runs the file itself, a plain `python` run of it may start processes
    of its own (`mp.spawn`), or a command does not write its count as a number."""
    runs = view.runs()
    if not view.launches(own=True) or any(command.launcher not in LAUNCHERS for command in runs):
        return None
    sizes = set()
    for command in runs:
        per_node = _PER_NODE.search(command.command)
        nodes = _NODES.search(command.command)
        counts = (
            per_node.group(1) if per_node is not None else str(LAUNCHERS[command.launcher].processes(command.command)),
            nodes.group(1) if nodes is not None else "1",
        )
        if not all(count.isdigit() for count in counts) or _OTHER_NODE_COUNT.search(command.command):
            return None
        sizes.add(int(counts[0]) * int(counts[1]))
    return frozenset(sizes)


def _drop_last(sampler: Construction) -> cst.Arg | None:
    """The sampler's drop_last: by DistributedSampler's signature, or by keyword for a project
    class that pads (its positions are its own)."""
    if sampler.kind == "sampler":
        return argument_for(sampler.node, DISTRIBUTED_SAMPLER, "drop_last")
    return next((arg for arg in sampler.node.args if arg.keyword is not None and arg.keyword.value == "drop_last"), None)


def _cut_parameter(frame, name: str) -> set[tuple[str, int | str]]:
    """(function, position) and (function, name) of `name` where it is a parameter of the module
    function `frame` that its body never rebinds; empty otherwise (a method: its callers' positions
    count `self`)."""
    node = frame.node if frame is not None else None
    if node is None or frame.key is None or "." in frame.key or not isinstance(frame.parent.node, cst.Module):
        return set()
    params = [*node.params.posonly_params, *node.params.params]
    positions = [i for i, param in enumerate(params) if param.name.value == name]
    if not positions and all(param.name.value != name for param in node.params.kwonly_params):
        return set()
    rebound = (*(t.target for t in nodes_under(node.body, cst.AssignTarget)), *(a.target for a in nodes_under(node.body, cst.AugAssign)))
    if any(name in _bound_names(target) for target in rebound):
        return set()
    return {(node.name.value, name), *((node.name.value, i) for i in positions)}


def _trains(loop: cst.CSTNode) -> bool:
    """The loop calls `backward()` somewhere in its body."""
    return any(
        isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward" for node in nodes_under(loop, cst.Call)
    )


def _bound_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds: `x`, and those of `x, y` or `(x, [y, z])`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound_names(element.value)]
    return []


def _length(expr: cst.BaseExpression, lengths: set[str]) -> bool:
    """`len(...)`, or a name bound to one."""
    if isinstance(expr, cst.Name):
        return expr.value in lengths
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"


def _gather_list(call: cst.Call, qualified: str) -> set[str]:
    """The list `dist.gather(t, gather_list=parts, dst=0)` (or `gather_object`) fills, by name."""
    if qualified not in COMBINING_COLLECTIVES or qualified.rpartition(".")[2] not in ("gather", "gather_object"):
        return set()
    keyword = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value in ("gather_list", "object_gather_list")), None)
    positional = [arg for arg in call.args if arg.keyword is None]
    filled = keyword if keyword is not None else positional[1] if len(positional) > 1 else None
    return {filled.value.value} if filled is not None and isinstance(filled.value, cst.Name) else set()


def _keys_by_zip(call: cst.Call) -> bool:
    """`results.update(zip(ids, preds))`: a dict keyed by the first sequence."""
    func, args = call.func, call.args
    return (
        isinstance(func, cst.Attribute) and func.attr.value == "update" and len(args) == 1 and args[0].keyword is None
        and isinstance(args[0].value, cst.Call) and isinstance(args[0].value.func, cst.Name) and args[0].value.func.value == "zip"
    )


# The names each expression reads, by the expression: DDP022 asks of every assigned value and
# argument of a collective on every lint, and in the language server an expression the edit did
# not touch is the same object from one lint to the next.
_names = NodeMemo()


def _names_read(expr: cst.CSTNode) -> frozenset[str]:
    """The identifiers of the `Name` nodes in `expr`, itself included."""
    return _names.get(expr, None, lambda: frozenset(n.value for n in (expr, *descendants(expr)) if isinstance(n, cst.Name)))  # type: ignore[return-value]
