"""Hand-made stand-ins for ddplint's fixes, for the harness tests ONLY.

They rewrite the bundled scenarios the way RULES.md says the real fixes will,
so that the harness's "after" path can be exercised before the linter's fixer
exists. The shipped harness never uses them: it calls ``python -m ddplint
check --fix --unsafe-fixes``.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.harness.runner import FixAttempt

REWRITES = {
    "DDP001": [(
        'def center(x, mean=torch.zeros(8).cuda()):\n    """Subtract the feature mean, kept on the GPU."""\n',
        'def center(x, mean=None):\n    """Subtract the feature mean, kept on the GPU."""\n'
        "    if mean is None:\n        mean = torch.zeros(8).cuda()\n",
    )],
    "DDP002": [
        ("from collections import defaultdict\n",
         "import functools\nimport operator\nfrom collections import defaultdict\n"),
        ("defaultdict(lambda: UNK)", "defaultdict(functools.partial(operator.itemgetter(0), (UNK,)))"),
    ],
    "DDP003": [(
        "    for epoch in range(2):\n",
        "    for epoch in range(2):\n        sampler.set_epoch(epoch)\n",
    )],
    "DDP004": [("torch.load(path)", 'torch.load(path, map_location="cpu")')],
    "DDP005": [(
        'torch.multiprocessing.set_sharing_strategy("file_system")\n',
        "import resource\n_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))\n",
    )],
    "DDP006": [(
        "        return iter(order)\n",
        "        order += order[: self.total_size - len(order)]\n"
        "        return iter(order[self.rank : self.total_size : self.num_replicas])\n",
    )],
}


def standin_fixer(path: Path) -> FixAttempt:
    rule = path.parent.parent.name  # <work>/<CODE>/after/program.py
    text = path.read_text()
    new = text
    for old, repl in REWRITES.get(rule, []):
        assert old in new, f"stand-in fix for {rule} no longer matches the scenario"
        new = new.replace(old, repl)
    path.write_text(new)
    return FixAttempt(new != text)


def identity_fixer(path: Path) -> FixAttempt:
    return FixAttempt(False)
