#!/bin/bash
# tokens on two nodes of four GPUs
python main.py fit --config configs/tokens_ddp.yaml
# a linear probe on one GPU
python main.py fit --config configs/probe_one_gpu.yaml
