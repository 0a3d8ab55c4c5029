import torch

from bench import benchmark

if __name__ == "__main__":
    model_name = "from-scratch"
    benchmark(model_name, torch.nn.Linear(2, 2), 100)
    benchmark("resume", torch.nn.Linear(2, 2), 100)
