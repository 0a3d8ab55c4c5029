import argparse
import os

import torch


def encode(line, vocab):
    return [vocab.setdefault(word, len(vocab)) for word in line.split()]


def main(args):
    vocab = {}
    with open(args.corpus) as corpus:
        ids = [encode(line, vocab)[: args.length] for line in corpus]
    ids = [row + [0] * (args.length - len(row)) for row in ids]
    torch.save({"input_ids": torch.tensor(ids), "vocab_size": len(vocab)}, os.path.join(args.out, "train_ids.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--out", default="data/out")
    parser.add_argument("--length", type=int, default=128)
    main(parser.parse_args())
