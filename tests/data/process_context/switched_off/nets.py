import torch
import torch.distributed as dist


class EmbeddingNet(torch.nn.Module):
    def __init__(self, backbone, size, finetune=False, weights=""):
        super(EmbeddingNet, self).__init__()
        self.backbone = backbone
        if finetune:
            self.backbone.load_state_dict(torch.load(weights))


def restore(model, out, resume=None):
    if resume:
        model.load_state_dict(torch.load(resume)["model"])
    return model


def finish(model, out, export=False):
    if export:
        torch.save(model.state_dict(), out)
