# PyTorch shape: a 20-step MLP training loop (linear, ReLU, cross-entropy, backward, SGD)
# with a fixed seed and deterministic algorithms; prints the loss every 5 steps.
import torch
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(256, 64, device=dev)
y = torch.randint(0, 10, (256,), device=dev)
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print("step", step + 1, "loss", round(loss.item(), 4))
