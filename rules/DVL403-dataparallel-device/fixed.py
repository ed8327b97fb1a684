"""Batch inference over a dataset on every GPU: the classifier is moved to `device` (cuda:0,
DataParallel's device_ids[0]) before it is wrapped in nn.DataParallel.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(512, 20)
labels = (features[:, :5].sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=128)

classifier = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
model = nn.DataParallel(classifier)
model.eval()

correct = 0
with torch.no_grad():
    for inputs, targets in loader:
        predictions = model(inputs).argmax(dim=1).cpu()
        correct += (predictions == targets).sum().item()
print(f"accuracy of the untrained classifier: {correct / len(features):.2f}")
