from evalpkg.data import make_eval_loader, make_indexed_loader
from evalpkg.evaluation import evaluate, predict_by_id


def main(model, val_set, test_set):
    print(evaluate(model, make_eval_loader(val_set)))
    print(predict_by_id(model, make_indexed_loader(test_set)))
