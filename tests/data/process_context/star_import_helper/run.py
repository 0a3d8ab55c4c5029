import os

from exp.trainer import Trainer

if __name__ == "__main__":
    Trainer(build_model(), int(os.environ["LOCAL_RANK"])).resume("last.pt")
