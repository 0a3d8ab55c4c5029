import sys

import hydra
from omegaconf import DictConfig

from retriever.setup import setup_devices


@hydra.main(config_path="conf", config_name="train")
def main(cfg: DictConfig):
    device, world = setup_devices(cfg)
    print(f"training on {device} with {world} processes")


if __name__ == "__main__":
    overrides = []
    for arg in sys.argv:
        if arg.startswith("--"):
            overrides.append(arg[2:])
        else:
            overrides.append(arg)
    sys.argv = overrides
    main()
