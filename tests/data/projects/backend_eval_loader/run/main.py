from run.backend import DDPBackend, LocalBackend
from run.data import build_test_loader, build_val_loader
from run.evaluate import evaluate


def main(model, val_set, test_set):
    backend = DDPBackend()
    val_loader = backend.prepare_loader(build_val_loader(val_set))
    print(evaluate(model, val_loader))
    local = LocalBackend()
    test_loader = local.prepare_loader(build_test_loader(test_set))
    print(evaluate(model, test_loader))
