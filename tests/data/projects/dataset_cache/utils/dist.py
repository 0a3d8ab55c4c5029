import torch.distributed as dist


def initialized():
    return dist.is_available() and dist.is_initialized()


def rank():
    return dist.get_rank() if initialized() else 0


def is_main_process():
    if not initialized():
        return True
    if rank() == 0:
        return True
    return False
