import torch

from wrapper import Wrapper, load_weights

if __name__ == "__main__":
    wrapper = Wrapper(torch.nn.Linear(4, 4).cuda())
    model = wrapper.reload_fitted()
    load_weights(model, "fitted.pt")
    torch.save(model.state_dict(), "exported.pt")
