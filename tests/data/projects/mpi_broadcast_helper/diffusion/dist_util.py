import io

import torch as th
from mpi4py import MPI


def load_state_dict(path, **kwargs):
    """Read the file on rank 0 and broadcast its bytes to the others."""
    if MPI.COMM_WORLD.Get_rank() == 0:
        with open(path, "rb") as f:
            data = f.read()
        MPI.COMM_WORLD.bcast(len(data))
        MPI.COMM_WORLD.bcast(data)
    else:
        MPI.COMM_WORLD.bcast(None)
        data = MPI.COMM_WORLD.bcast(None)
    return th.load(io.BytesIO(data), **kwargs)

