import torch


def build_optimizer(model, resume=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if resume is not None:
        state = torch.load(resume)
        optimizer.load_state_dict(state.pop("optimizer"))
    return optimizer


def build_scheduler(optimizer, resume=None):
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    if resume is not None:
        state = torch.load(resume)
        scheduler.load_state_dict(state["scheduler"])
    return scheduler
