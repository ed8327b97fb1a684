"""Training wraps the model in nn.DataParallel when there are several GPUs but saves the state
dict of the bare model, which loads into a fresh, unwrapped model for evaluation.
"""

import os
import tempfile

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(3, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.hidden(x)))


inputs = torch.randn(256, 3, device=device)
targets = inputs.pow(2).sum(dim=1, keepdim=True)

regressor = Regressor().to(device)
model = regressor
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(regressor)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(50):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()

with tempfile.TemporaryDirectory() as workdir:
    path = os.path.join(workdir, "regressor.pt")
    torch.save(regressor.state_dict(), path)

    evaluator = Regressor().to(device)
    evaluator.load_state_dict(torch.load(path, map_location=device))
    evaluator.eval()
    with torch.no_grad():
        test_loss = nn.functional.mse_loss(evaluator(inputs), targets)
    print(f"train loss {loss.item():.4f}, reloaded loss {test_loss.item():.4f}")
