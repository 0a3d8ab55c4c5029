#!/bin/bash
# Convert a checkpoint trained with TP=2, PP=2 to Hugging Face's format.
deepspeed --num_gpus 8 tools/convert.py --load checkpoints/gpt --save converted/ --tp 2 --pp 2
