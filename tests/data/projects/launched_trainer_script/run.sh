torchrun --nproc_per_node=4 finetune.py
