from torch.nn.parallel import DistributedDataParallel

from segkit.data import train_loader


def fit(net, dataset, optimizer):
    model = DistributedDataParallel(net.cuda())
    for images, labels in train_loader(dataset, 32):
        optimizer.zero_grad()
        model(images.cuda()).loss(labels.cuda()).backward()
        optimizer.step()
