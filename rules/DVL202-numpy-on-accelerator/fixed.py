"""Evaluation copies predictions to the host with `.cpu()` before building a confusion matrix."""

import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

num_classes = 3
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, num_classes)).to(device)
model.eval()

features = torch.randn(40, 6, device=device)
labels = features[:, :num_classes].argmax(dim=1)
with torch.no_grad():
    predicted = model(features).argmax(dim=1)

true_classes = labels.cpu().numpy()
predicted_classes = predicted.cpu().numpy()
confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
np.add.at(confusion, (true_classes, predicted_classes), 1)
accuracy = np.trace(confusion) / confusion.sum()
print(f"accuracy {accuracy:.2f}\n{confusion}")
