accelerate launch --multi_gpu sweep.py
