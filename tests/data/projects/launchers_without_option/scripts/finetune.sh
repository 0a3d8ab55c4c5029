#!/bin/sh
# DeepSpeed's launcher passes --local_rank=N to each process
deepspeed --num_gpus 8 finetune.py --lr 2e-5
