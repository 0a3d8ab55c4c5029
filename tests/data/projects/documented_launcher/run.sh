#!/usr/bin/env bash
python3 -m torch.distributed.launch --nproc_per_node=8 \
    --master_port=29500 \
    tools/train.py --config configs/base.yaml
