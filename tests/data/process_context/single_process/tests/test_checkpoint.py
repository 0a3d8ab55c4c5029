import torch
import torch.distributed as dist


def test_round_trip(tmp_path):
    assert not dist.is_initialized()
    model = torch.nn.Linear(2, 2)
    torch.save(model.state_dict(), tmp_path / "m.pt")
    model.load_state_dict(torch.load(tmp_path / "m.pt"))
