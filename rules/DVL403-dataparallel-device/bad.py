"""Batch inference over a dataset on every GPU: the classifier is wrapped in nn.DataParallel but
never moved to the GPU, so its parameters stay on the CPU.

Needs 2 GPUs: on a CPU-only machine DataParallel just calls the model, and with a single GPU it
moves the model to cuda:0 itself. On 2 GPUs: RuntimeError: module must have its parameters and
buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(512, 20)
labels = (features[:, :5].sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=128)

classifier = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
model = nn.DataParallel(classifier)
model.eval()

correct = 0
with torch.no_grad():
    for inputs, targets in loader:
        predictions = model(inputs).argmax(dim=1).cpu()  # expect: DVL403@23
        correct += (predictions == targets).sum().item()
print(f"accuracy of the untrained classifier: {correct / len(features):.2f}")
