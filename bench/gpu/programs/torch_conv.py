# PyTorch shape: a small conv net (two convolutions through cuDNN, pooling, a linear
# head), forward and backward with deterministic algorithms; prints a digest.
import torch
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
dev = "cuda"
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(16, 10)).to(dev)
x = torch.randn(8, 3, 32, 32, device=dev)
out = net(x)
out.square().mean().backward()
print("out", round(out.abs().sum().item(), 3), "grad", round(net[0].weight.grad.abs().sum().item(), 3))
