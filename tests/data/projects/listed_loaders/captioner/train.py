import torch
import torch.distributed as dist

from captioner.data import create_loader, create_sampler


@torch.no_grad()
def evaluate(model, data_loader):
    correct = torch.zeros(2, device="cuda")
    for image, label in data_loader:
        correct[0] += (model(image).argmax(1) == label).sum()
        correct[1] += label.numel()
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def train_one_epoch(model, loader, optimizer):
    for image, label in loader:
        loss = model(image, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, optimizer, train_dataset, val_dataset, test_dataset, epochs):
    num_tasks = dist.get_world_size()
    global_rank = dist.get_rank()
    samplers = create_sampler([train_dataset, val_dataset, test_dataset], [True, False, False], num_tasks, global_rank)
    train_loader, val_loader, test_loader = create_loader(
        [train_dataset, val_dataset, test_dataset], samplers, batch_size=[32, 64, 64], num_workers=[4, 4, 4],
        is_trains=[True, False, False], collate_fns=[None, None, None],
    )
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer)
        print(evaluate(model, val_loader))
    print(evaluate(model, test_loader))
