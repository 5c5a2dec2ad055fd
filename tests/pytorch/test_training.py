"""Unmodified PyTorch training loops on minilazy.pytorch, against the same loops in PyTorch eager:
the same losses and parameters, one graph per step, compiled once."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import minilazy as ml  # noqa: E402
from minilazy.pytorch import lazy, mark_step  # noqa: E402


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(20, 32), nn.Linear(32, 5)

    def forward(self, x):
        return self.b(F.relu(self.a(x)))


class CNN(nn.Module):
    # no bias before a batch norm: its gradient is zero, and Adam turns rounding noise in a
    # zero gradient into a full step, in eager PyTorch as much as here
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 6, 3)
        self.fc = nn.Linear(6 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2)
        x = F.avg_pool2d(F.gelu(self.c2(x)), 2)
        return self.fc(torch.flatten(x, 1))


class Transformer(nn.Module):
    def __init__(self, vocab: int = 11, d: int = 16, t: int = 6, heads: int = 2) -> None:
        super().__init__()
        self.vocab, self.heads = vocab, heads
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(t, d) * 0.1)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)  # a key bias has a zero gradient (softmax)
        self.proj = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        b, t = idx.shape
        x = self.emb(idx) + self.pos[:t]
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        x = x + self.ff(self.ln2(x))
        return self.head(x).reshape(-1, self.vocab)


def _data(model: str, g: torch.Generator):
    if model == "mlp":
        return torch.randn(8, 20, generator=g), torch.randint(0, 5, (8,), generator=g)
    if model == "cnn":
        return torch.randn(4, 1, 12, 12, generator=g), torch.randint(0, 5, (4,), generator=g)
    return torch.randint(0, 11, (3, 6), generator=g), torch.randint(0, 11, (18,), generator=g)


MODELS = {"mlp": MLP, "cnn": CNN, "transformer": Transformer}
OPTIMIZERS = {
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "sgd-foreach": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                             weight_decay=1e-3, foreach=True),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adamw-foreach": lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True),
}


def _step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_training_matches_eager_and_compiles_once(model, optimizer):
    torch.manual_seed(0)
    eager = MODELS[model]()
    mine = lazy(copy.deepcopy(eager))
    opt_eager, opt_mine = OPTIMIZERS[optimizer](eager.parameters()), \
        OPTIMIZERS[optimizer](mine.parameters())
    g = torch.Generator().manual_seed(1)
    compiles = []
    for _ in range(5):
        for opt in (opt_eager, opt_mine):  # a new learning rate each step: a parameter
            opt.param_groups[0]["lr"] *= 0.9
        x, y = _data(model, g)  # new data each step
        before = ml.metrics()
        want = _step(eager, opt_eager, x, y).item()
        got = _step(mine, opt_mine, lazy(x), lazy(y))
        assert ml.metrics().executions == before.executions  # nothing ran: recorded
        mark_step()
        after = ml.metrics()
        assert after.executions == before.executions + 1  # the whole step: one program
        compiles.append(after.compiles - before.compiles)
        assert got.item() == pytest.approx(want, rel=1e-4, abs=1e-5)
    # warm-up: the first step (optimizer state made) and the second (state read) differ
    assert sum(compiles[2:]) == 0, compiles
    for (name, p), q in zip(eager.named_parameters(), mine.parameters()):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5,
                                   msg=lambda m, name=name: f"{name}: {m}")
    for b, c in zip(eager.buffers(), mine.buffers()):  # batch norm's running statistics
        torch.testing.assert_close(c.cpu(), b, rtol=1e-4, atol=1e-5)


def test_eval_mode_and_no_grad_match_eager():
    torch.manual_seed(0)
    eager = CNN()
    _step(eager, torch.optim.SGD(eager.parameters(), lr=0.1), *_data("cnn", torch.Generator()))
    mine = lazy(copy.deepcopy(eager))
    eager.eval(), mine.eval()
    x = torch.randn(2, 1, 12, 12)
    with torch.no_grad():
        got = mine(lazy(x))
        assert not got.requires_grad
        torch.testing.assert_close(got.cpu(), eager(x), rtol=1e-4, atol=1e-5)


def test_dropout_is_lazy_and_seeded_by_torch():
    drop = nn.Dropout(0.5)
    x = lazy(torch.ones(2000))

    def sample(seed):
        torch.manual_seed(seed)
        return drop(x).cpu()

    a, b, c = sample(0), sample(0), sample(1)
    assert torch.equal(a, b) and not torch.equal(a, c)  # torch.manual_seed repeats a run
    assert set(a.unique().tolist()) == {0.0, 2.0}  # kept values scaled by 1 / (1 - p)
    assert 800 < int((a == 0).sum()) < 1200


def test_module_to_device_and_tied_parameters():
    lin = nn.Linear(4, 4)
    net = nn.Sequential(lin, nn.ReLU(), lin)  # one module (one weight) used twice
    lazy(net)
    assert net[0].weight is net[2].weight and type(net[0].weight).__name__ == "LazyTensor"
    moved = nn.Linear(3, 2).to("minilazy")
    assert moved.weight.device.type == "minilazy" and moved.weight.requires_grad
    x = torch.randn(5, 3)
    ref = F.linear(x, moved.weight.detach().cpu(), moved.bias.detach().cpu())
    torch.testing.assert_close(moved(x.to("minilazy")).cpu(), ref)


def test_gradients_accumulate_over_backward_calls_as_in_eager():
    # sum's backward hands autograd an expanded gradient: it must be copied, not written into
    torch.manual_seed(0)
    eager = MLP()
    mine = lazy(copy.deepcopy(eager))
    g = torch.Generator().manual_seed(3)
    for _ in range(3):  # micro-batches, one optimizer step after them
        x, y = _data("mlp", g)
        F.cross_entropy(eager(x), y).backward()
        F.cross_entropy(mine(lazy(x)), lazy(y)).backward()
        eager.b.bias.sum().backward()  # a parameter's gradient made by sum alone
        mine.b.bias.sum().backward()
    for p, q in zip(eager.parameters(), mine.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-5, atol=1e-6)
