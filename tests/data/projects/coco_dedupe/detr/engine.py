from detr.coco_eval import CocoEvaluator


def evaluate(model, data_loader):
    coco_evaluator = CocoEvaluator()
    for samples, targets in data_loader:
        coco_evaluator.update(model(samples))
    coco_evaluator.synchronize_between_processes()
    return coco_evaluator
