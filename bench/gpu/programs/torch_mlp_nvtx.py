# PyTorch shape for range capture by NVTX range (issue 23): torch_mlp.py's 20-step MLP
# training loop with every step an NVTX range named "step" (torch.cuda.nvtx.range_push /
# range_pop), as profiled training loops mark them; HRR_CAPTURE_RANGE=nvtx:step:10 records
# the 10th. That step's loss is read inside its range.
import torch
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(256, 64, device=dev)
y = torch.randint(0, 10, (256,), device=dev)
for step in range(20):
    torch.cuda.nvtx.range_push("step")
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step == 9:
        print("step 10 loss", round(loss.item(), 4), "weight sum", round(model[0].weight.sum().item(), 4))
    torch.cuda.nvtx.range_pop()
    if step % 5 == 4:
        print("step", step + 1, "loss", round(loss.item(), 4))
