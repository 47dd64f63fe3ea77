# PyTorch shape: elementwise work only (no library kernels): arange, arithmetic, sin, a
# reduction; prints the sum.
import torch
x = torch.arange(4096, device="cuda", dtype=torch.float32)
y = (x * 3 + 1).sin()
print("sum", round(y.sum().item(), 3))
