"""Train a keyword spotter with DistributedDataParallel (fairseq/ESPnet-style layout).

    torchrun --nproc-per-node 2 train.py --manifest data/train.csv --save-dir checkpoints
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from dataset import N_MELS, SpeechCommands, collate
from model import KWSNet
from sampler import BucketingSampler


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--save-dir", default="checkpoints")
    parser.add_argument("--max-epoch", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--num-classes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    return parser


def export_for_inference(args):
    """A plain model, no DDP wrapper, from the last checkpoint."""
    export = KWSNet(N_MELS, args.num_classes)
    state = torch.load(os.path.join(args.save_dir, "checkpoint_last.pt"), map_location="cpu")
    export.load_state_dict(state)
    return torch.jit.script(export.eval())


def main(args):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(args.seed)
    dataset = SpeechCommands(args.manifest)
    sampler = BucketingSampler(dataset, dataset.lengths, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)
    valid_loader = DataLoader(dataset, batch_size=args.batch_size, collate_fn=collate)

    model = DistributedDataParallel(KWSNet(N_MELS, args.num_classes))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    os.makedirs(args.save_dir, exist_ok=True)
    for epoch in range(args.max_epoch):
        sampler.set_epoch(epoch)
        model.train()
        for feats, labels in loader:
            loss = criterion(model(feats), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            model.eval()
            correct = total = 0
            with torch.no_grad():
                for feats, labels in valid_loader:
                    correct += (model(feats).argmax(1) == labels).sum().item()
                    total += len(labels)
            accuracy = correct / max(total, 1)
            print(f"| epoch {epoch:03d} | loss {loss.item():.3f} | valid accuracy {accuracy:.3f}", flush=True)
            torch.save(model.state_dict(), os.path.join(args.save_dir, "checkpoint_last.pt"))
    dist.barrier()

    export_for_inference(args)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(get_parser().parse_args())
