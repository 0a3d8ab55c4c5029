from app import engine


def main(args, net, criterion, loader, optimizer):
    model = net.cuda()
    model_without_ddp = model.module if hasattr(model, "module") else model
    engine.train_one_epoch(model_without_ddp, criterion, loader, optimizer)
