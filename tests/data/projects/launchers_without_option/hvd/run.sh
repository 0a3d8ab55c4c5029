#!/bin/sh
horovodrun -np 8 -H localhost:8 python hvd/train_hvd.py --lr 0.05
