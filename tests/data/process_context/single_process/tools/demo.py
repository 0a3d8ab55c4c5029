# A one-GPU demo of the model that train.py trains on several GPUs (Distributed Data Parallel).
import torch


def show(path):
    model = torch.nn.Linear(2, 2).cuda()
    model.load_state_dict(torch.load(path))
    print(model)


if __name__ == "__main__":
    show("ckpt.pt")
