"""A text classifier is wrapped in nn.DataParallel when the machine has several GPUs; the
script keeps a reference to the bare classifier for its own attribute and method.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class BagOfWordsClassifier(nn.Module):
    def __init__(self, vocab_size: int, dim: int, num_classes: int) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.embedding = nn.EmbeddingBag(vocab_size, dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embedding(tokens))

    def predict(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.forward(tokens).argmax(dim=-1)


classifier = BagOfWordsClassifier(vocab_size=100, dim=16, num_classes=4).to(device)
model = classifier
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(classifier)

tokens = torch.randint(0, 100, (64, 12), device=device)
labels = torch.randint(0, classifier.num_classes, (64,), device=device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(20):
    optimizer.zero_grad()
    loss = criterion(model(tokens), labels)
    loss.backward()
    optimizer.step()

accuracy = (classifier.predict(tokens) == labels).float().mean()
print(f"loss {loss.item():.4f}, training accuracy {accuracy.item():.2f}")
