import lightning as L
import torch

from model import GPT


def main(out_dir="out"):
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="bf16-mixed")
    fabric.launch()
    model = GPT()
    model.load_state_dict(torch.load("checkpoints/base.pth"))
    model, optimizer = fabric.setup(model, torch.optim.AdamW(model.parameters()))
    for step in range(100):
        loss = model(torch.randint(0, 100, (8, 64))).mean()
        fabric.backward(loss)
        optimizer.step()
        if fabric.is_global_zero:
            torch.save(model.state_dict(), f"{out_dir}/step-{step}.pth")
    torch.save(model.state_dict(), f"{out_dir}/final.pth")


if __name__ == "__main__":
    main()
