torchrun --nproc_per_node 2 finetune.py
