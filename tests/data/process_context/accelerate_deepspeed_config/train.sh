accelerate launch --config_file configs/zero2.yaml train.py
