import torch.distributed as dist

from utils.ckpt import resume


def main(model, path):
    dist.init_process_group("nccl")
    resume(model, path)
    # old_resume(model, path) -- kept for reference, no longer called


if __name__ == "__main__":
    main(None, "ckpt.pt")
