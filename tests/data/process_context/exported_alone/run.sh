torchrun --nproc_per_node 4 train.py
