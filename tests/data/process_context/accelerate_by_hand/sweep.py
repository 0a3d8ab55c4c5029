import torch
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    model = torch.nn.Linear(4, 4)
    model.load_state_dict(torch.load("pretrained.pt"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = accelerator.prepare(model, optimizer)
    for _ in range(3):
        loss = model(torch.randn(2, 4, device=accelerator.device)).sum()
        accelerator.backward(loss)
        optimizer.step()
    torch.save(accelerator.unwrap_model(model).state_dict(), "swept.pt")


if __name__ == "__main__":
    main()
