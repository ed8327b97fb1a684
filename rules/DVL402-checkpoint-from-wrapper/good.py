"""A checkpoint round trip that works with and without nn.DataParallel: the training run saves
`model.module.state_dict()` with the optimizer state, and resuming loads the weights into the
bare model before wrapping it again; a legacy checkpoint with `module.`-prefixed keys is
loaded after stripping the prefix.
"""

import os
import tempfile

import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))


inputs = torch.randn(64, 6, device=device)
labels = (inputs[:, 0] > 0).long()

model = nn.DataParallel(make_model().to(device))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()

with tempfile.TemporaryDirectory() as workdir:
    path = os.path.join(workdir, "checkpoint.pt")
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}, path)

    checkpoint = torch.load(path, map_location=device)
    resumed = make_model().to(device)
    resumed.load_state_dict(checkpoint["model"])
    resumed_model = nn.DataParallel(resumed)
    resumed_optimizer = torch.optim.SGD(resumed_model.parameters(), lr=0.1)
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])

    legacy = {f"module.{name}": tensor for name, tensor in checkpoint["model"].items()}
    consume_prefix_in_state_dict_if_present(legacy, "module.")
    inference_model = make_model().to(device)
    inference_model.load_state_dict(legacy)

    with torch.no_grad():
        agree = (resumed_model(inputs).argmax(1) == inference_model(inputs).argmax(1)).all()
    print(f"loss {loss.item():.4f}, reloaded models agree: {bool(agree)}")
