mpiexec -n 4 python train.py
