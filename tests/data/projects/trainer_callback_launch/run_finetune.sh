#!/usr/bin/env bash
torchrun --nproc_per_node 8 finetune.py \
    --output_dir out \
    --save_steps 200
