#!/bin/bash
deepspeed --num_gpus 8 pretrain_gpt.py --save checkpoints/gpt --tp 2 --pp 2
