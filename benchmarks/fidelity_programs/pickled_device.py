"""A torch.device through pickle and torch.save (issue 35, item 3)."""

import io
import pickle

import torch

print("pickle", pickle.loads(pickle.dumps(torch.device("cuda", 0))))
buffer = io.BytesIO()
torch.save({"device": torch.device("cuda"), "weight": torch.ones(2, device="cuda")}, buffer)
buffer.seek(0)
loaded = torch.load(buffer, weights_only=False)
print("save", loaded["device"], loaded["weight"].device)
