# PyTorch shape: a small MLP forward and backward pass, a convolution, and a reduction on
# the GPU; prints a digest of the results, rounded so that it is stable across runs.
import torch
torch.manual_seed(0)
x = torch.randn(256, 512, device="cuda")
w1 = torch.randn(512, 256, device="cuda", requires_grad=True)
w2 = torch.randn(256, 10, device="cuda", requires_grad=True)
y = torch.relu(x @ w1) @ w2
loss = y.square().mean()
loss.backward()
img = torch.randn(4, 3, 64, 64, device="cuda")
conv = torch.nn.functional.conv2d(img, torch.randn(8, 3, 3, 3, device="cuda"), padding=1)
print("loss", round(loss.item(), 1), "grad", round(w1.grad.abs().sum().item(), -2), "conv", round(conv.abs().mean().item(), 2))
