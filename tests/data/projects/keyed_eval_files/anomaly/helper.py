import glob
import os

import numpy as np


def dump(save_dir, outputs):
    filenames = outputs["filename"]
    preds = outputs["pred"].cpu().numpy()
    for i in range(len(filenames)):
        _, filename = os.path.split(filenames[i])
        name, _ = os.path.splitext(filename)
        np.savez(os.path.join(save_dir, name + ".npz"), pred=preds[i])  # one file per image: a repeat overwrites it


def merge_together(save_dir):
    preds = [np.load(path)["pred"] for path in glob.glob(os.path.join(save_dir, "*.npz"))]
    return np.concatenate(preds)
