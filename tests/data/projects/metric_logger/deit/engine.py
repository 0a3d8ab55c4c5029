import torch

from deit import utils


def train_one_epoch(model, criterion, data_loader, optimizer):
    metric_logger = utils.MetricLogger()
    for samples, targets in metric_logger.log_every(data_loader, 10):
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    metric_logger.synchronize_between_processes()


@torch.no_grad()
def evaluate(data_loader, model):
    metric_logger = utils.MetricLogger()
    for images, target in metric_logger.log_every(data_loader, 10):
        acc1 = (model(images).argmax(1) == target).float().mean()
        metric_logger.meters["acc1"].update(acc1.item(), n=images.shape[0])
    metric_logger.synchronize_between_processes()
    return {k: meter.total / meter.count for k, meter in metric_logger.meters.items()}
