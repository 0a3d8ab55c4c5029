import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.edits import string_literal, with_keyword_argument
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rule import Clean, Flagged, Rule
from ddplint.torch_api import TORCH_LOAD


class TorchLoadWithoutMapLocation(Rule):
    """
    `torch.load` puts every tensor back on the device it was saved from. A checkpoint saved
    by rank 0 of a GPU job records `cuda:0`, so under DDP every rank that loads it allocates
    on GPU 0: memory piles up on one card until it runs out, while the other GPUs idle. On a
    machine without that device the load fails outright with "Attempting to deserialize
    object on a CUDA device but torch.cuda.is_available() is False".

    Pass `map_location`. The fix adds `map_location="cpu"`, which loads anywhere; move the
    tensors to the rank's own device afterwards (or pass `map_location=f"cuda:{local_rank}"`).
    A dict such as `{"cuda:0": "cpu"}` is not enough: a checkpoint saved from `cuda:1` still
    lands on `cuda:1`. `weights_only` is left as it is.
    """

    code = "DDP004"
    name = "torch-load-without-map-location"
    message = 'torch.load without map_location loads onto the saving device (GPU 0 on every rank); pass map_location="cpu"'
    fix = Applicability.SAFE
    trigger = CallTrigger(TORCH_LOAD, without_keyword="map_location")

    flagged_examples = (
        Flagged(
            """
            import torch
            state = torch.load("checkpoint.pt")
            """,
            fixed="""
            import torch
            state = torch.load("checkpoint.pt", map_location="cpu")
            """,
        ),
        Flagged(
            """
            import torch as th
            model.load_state_dict(th.load(path, weights_only=True))
            """,
            fixed="""
            import torch as th
            model.load_state_dict(th.load(path, weights_only=True, map_location="cpu"))
            """,
        ),
        Flagged(
            """
            from torch import load as restore
            def resume(path):
                return restore(path)
            """,
            fixed="""
            from torch import load as restore
            def resume(path):
                return restore(path, map_location="cpu")
            """,
        ),
        Flagged(
            """
            import torch.serialization
            checkpoint = torch.serialization.load(
                args.resume,
                weights_only=False,
            )
            """,
            fixed="""
            import torch.serialization
            checkpoint = torch.serialization.load(
                args.resume,
                weights_only=False,
                map_location="cpu",
            )
            """,
        ),
        Flagged(
            """
            def main():
                checkpoint = torch.load(args.resume)

            import torch
            """,
            fixed="""
            def main():
                checkpoint = torch.load(args.resume, map_location="cpu")

            import torch
            """,
        ),
        Flagged(
            """
            from torch import (
                nn,
                load,
            )
            state = load(path)
            """,
            fixed="""
            from torch import (
                nn,
                load,
            )
            state = load(path, map_location="cpu")
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch
            a = torch.load("a.pt", map_location="cpu")
            b = torch.load("b.pt", lambda storage, loc: storage)
            c = torch.load("c.pt", **load_options)
            d = torch.load(*args)
            """
        ),
        Clean(
            """
            import json, pickle
            import numpy as np
            config = json.load(open("config.json"))
            array = np.load("weights.npy")
            """
        ),
        Clean(
            """
            from torch import load

            def load(path):
                return open(path).read()

            text = load("notes.txt")
            """
        ),
        Clean(
            """
            import torch

            def restore(torch, path):
                return torch.load(path)
            """
        ),
    )

    def check(self, node: cst.Call) -> None:
        fixed = with_keyword_argument(node, "map_location", string_literal("cpu"))
        self.report(node, replace={node: fixed})
