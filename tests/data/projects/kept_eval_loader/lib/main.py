from lib.data import get_predict_loader, get_test_loader
from lib.trainer import Evaluator, Predictor, Trainer


def main(model, optimizer, train_set, val_set, test_set):
    trainer = Trainer(model, optimizer, train_set, val_set)
    trainer.train_epoch()
    print(trainer.validate())
    print(Evaluator(model, get_test_loader(test_set)).run())
    Predictor(model, get_predict_loader(test_set)).run("preds")
