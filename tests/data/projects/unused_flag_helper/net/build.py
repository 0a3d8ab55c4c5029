from net.models.sr import SRNet


def network_class(name):
    if name == "srnet":
        network = SRNet
    else:
        network = SRNet  # the only network so far
    return network


def create_model(cfg):
    model = SRNet(channels=cfg.channels)
    return model
