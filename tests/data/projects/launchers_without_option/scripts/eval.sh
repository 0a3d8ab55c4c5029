#!/bin/sh
torchrun --nproc_per_node=4 evaluate.py --checkpoint runs/last.pt
