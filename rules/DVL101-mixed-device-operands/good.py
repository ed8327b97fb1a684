"""Label-smoothed loss on `device`: helper tensors follow their input's device, and a CPU 0-dim
temperature, Python scalars, a CPU index tensor and `copy_` may all meet CUDA tensors.
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

num_classes, smoothing = 5, 0.1
logits = torch.randn(8, num_classes, device=device)
targets = torch.randint(0, num_classes, (8,), device=device)

temperature = torch.tensor(2.0)  # CPU 0-dim tensor: allowed as an input of a CUDA op
scaled = logits / temperature
soft_targets = torch.full_like(scaled, smoothing / (num_classes - 1))
soft_targets.scatter_(1, targets.unsqueeze(1), 1.0 - smoothing)
loss = -(soft_targets * scaled.log_softmax(dim=-1)).sum(dim=-1).mean()

hardest = torch.tensor([0, 3])  # CPU index tensor: advanced indexing accepts it
hard_margin = scaled[hardest] - scaled.new_zeros(num_classes)
class_ids = torch.arange(num_classes, device=logits.device)
confident = (scaled.argmax(dim=-1) == class_ids[2]).float()

history = torch.zeros(1)
history.copy_(loss.detach().reshape(1))  # copy_ crosses devices by design
print(f"loss {history.item():.4f}, margin {tuple(hard_margin.shape)}, "
      f"{int(confident.sum().item())} confident on {scaled.device}")
