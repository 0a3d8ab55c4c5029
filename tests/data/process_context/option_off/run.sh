torchrun --nproc_per_node=4 train.py --epochs 20 --init pretrained.pt
