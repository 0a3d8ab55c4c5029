import torch
import torch.distributed as dist

from anomaly.helper import dump, merge_together


def validate(val_loader, model, eval_dir):
    total = torch.zeros(2)
    with torch.no_grad():
        for batch in val_loader:
            outputs = model(batch)
            dump(eval_dir, outputs)
            total += torch.stack([outputs["loss"].sum(), torch.tensor(float(len(outputs["filename"])))])
    dist.all_reduce(total)
    print("loss", (total[0] / total[1]).item())
    if dist.get_rank() == 0:
        return merge_together(eval_dir)
    return None

