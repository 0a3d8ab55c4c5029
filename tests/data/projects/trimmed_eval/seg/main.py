from seg.datasets.build import build_aux_loader, build_loader
from seg.engine import evaluate, evaluate_aux


def main(model, val_set, test_set, aux_set):
    print(evaluate(model, build_loader(val_set, is_train=False)))
    print(evaluate_aux(model, build_aux_loader(aux_set)))
