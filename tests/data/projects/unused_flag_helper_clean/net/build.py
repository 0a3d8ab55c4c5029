from net.models.sr import Full, Plain


def network_class(name):
    if name == "plain":
        return Plain  # its forward skips a layer unless asked
    return Full


def create_model(cfg):
    model = Full()
    model.aux = Plain()  # a module added after it was built, never run by Full's forward
    return model
