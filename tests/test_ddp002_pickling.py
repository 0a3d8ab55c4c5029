"""DDP002's fixes really pickle, and the fixed factories return what the lambdas returned.

Each golden fix is executed as a fresh module registered in `sys.modules` (so pickle can find
its module-level functions by name); the defaultdicts it builds are pickled and unpickled and
their missing keys compared with those of the original, lambda-built dicts.
"""

import pickle
import sys
import types
from types import SimpleNamespace

import pytest

from ddplint.rules.ddp002_lambda_default_factory import LambdaDefaultFactory
from ddplint_test_support import needs_torch


def _vocab(module, tmp_path):
    path = tmp_path / "word2id.pkl"
    path.write_bytes(pickle.dumps({"<pad>": 0}))
    vocab = module.Vocab()
    vocab.load(str(path))
    return [vocab.word2id]


def _saved(module, tmp_path):
    saved = []
    module.torch = SimpleNamespace(save=lambda obj, path: saved.append(obj["vocab"]))
    module.save(str(tmp_path / "vocab.pt"), SimpleNamespace(put=saved.append))
    return saved


def _table(module, tmp_path):
    table = module.Lexicon()
    return [table.entries, table.limits, table.labels]


def _main_block(index):
    """Run the example as a script (its `if __name__ == "__main__":` block too)."""

    def probe(module, tmp_path):
        example = LambdaDefaultFactory.flagged_examples[index]
        code = example.fixed if module.__name__.startswith("ddp002_fixed") else example.code
        namespace = {"__name__": "__main__"}
        exec(compile(code, module.__name__, "exec"), namespace)
        return [namespace["counts"]]

    return probe


def _stats(module, tmp_path):
    shared = []
    module.Vocab().share(SimpleNamespace(put=shared.append))
    return [module.Stats().per_class, *shared]


# For each flagged example with a golden fix (by index): how to get the defaultdicts it builds.
PROBES = {
    0: _vocab,
    1: lambda module, tmp_path: [module.VocabCounts().counts, module.VocabCounts().weights],
    2: lambda module, tmp_path: [module.VOCAB_INDEX, module.VOCAB_NAMES],
    3: lambda module, tmp_path: [module.build_vocab_index([("key", "sub", 1)])],
    4: lambda module, tmp_path: [module.RuntimeDataset().per_module],
    5: _saved,
    6: lambda module, tmp_path: list(module.vocab_shards()),
    7: _table,
    8: lambda module, tmp_path: [module.loader(None).dataset[0]],
    11: _main_block(11),
    12: _stats,
    13: lambda module, tmp_path: [module.Tokenizer().by_word, module.Tokenizer().by_id],
    14: lambda module, tmp_path: [module.UNK_VOCAB],
}
FIXED = [(index, example) for index, example in enumerate(LambdaDefaultFactory.flagged_examples) if example.fixed]
# The examples that import torch run only where it is installed.
FIXED_PARAMS = [pytest.param(index, example, id=f"flagged-{index}", marks=[needs_torch] if "torch" in example.code else [])
                for index, example in FIXED]


def test_every_golden_fix_has_a_probe():
    assert sorted(PROBES) == [index for index, _ in FIXED]


def _load(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(code, name, "exec"), module.__dict__)
    return module


@pytest.fixture
def modules():
    names = []

    def load(code, name):
        names.append(name)
        return _load(code, name)

    yield load
    for name in names:
        sys.modules.pop(name, None)


def _same_value(left, right):
    assert type(left) is type(right)
    assert left == right
    if hasattr(left, "default_factory"):
        assert left.default_factory is right.default_factory or left.default_factory() == right.default_factory()


@pytest.mark.parametrize("index, example", FIXED_PARAMS)
def test_fixed_defaultdict_pickles_and_returns_the_same_defaults(index, example, modules, tmp_path):
    originals = PROBES[index](modules(example.code, f"ddp002_original_{index}"), tmp_path)
    fixed = PROBES[index](modules(example.fixed, f"ddp002_fixed_{index}"), tmp_path)
    assert originals and len(originals) == len(fixed)
    for original, candidate in zip(originals, fixed):
        with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
            pickle.dumps(original)
        restored = pickle.loads(pickle.dumps(candidate))
        assert dict(restored) == dict(candidate)
        for key in ("missing", "another"):
            _same_value(original[key], restored[key])
        if original["a"].__hash__ is None:
            # Mutable defaults are fresh objects per key, as the lambda's were.
            assert restored["a"] is not restored["b"]
