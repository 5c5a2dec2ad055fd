"""PyTorch's semantics on minilazy.pytorch, against PyTorch eager on the CPU: type promotion,
integer division, views and writes through them, autograd flags, errors, observation and
laziness (read through ml.metrics())."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

import minilazy as ml  # noqa: E402
from minilazy.pytorch import ATEN, VIEWS, lazy, mark_step  # noqa: E402

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float32, torch.float64]
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
          "eq": operator.eq, "lt": operator.lt, "ge": operator.ge, "maximum": torch.maximum,
          "where": lambda a, b: torch.where(a > 1, a, b) if isinstance(b, torch.Tensor)
          else torch.where(a > 1, a, b)}


def _tensor(dtype, data):
    values = np.asarray(data, np.float64)
    if dtype == torch.bool:
        return torch.from_numpy(values > 0)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        values = np.clip(np.round(values), max(info.min, -100), min(info.max, 100))
    return torch.from_numpy(values).to(dtype)


def _same(got, want):
    assert isinstance(got, torch.Tensor) and got.device.type == "minilazy"
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6, equal_nan=True)


# XLA on the CPU flushes subnormal numbers to zero (PyTorch and NumPy do not): not drawn
values = st.lists(st.floats(-50, 50, allow_nan=False, allow_subnormal=False), min_size=3,
                  max_size=3)


@settings(deadline=None, max_examples=60)
@given(op=st.sampled_from(sorted(BINARY)), a=st.sampled_from(DTYPES),
       b=st.sampled_from(DTYPES + [int, float, bool]), xs=values, ys=values)
def test_binary_ops_promote_and_compute_as_pytorch(op, a, b, xs, ys):
    f = BINARY[op]
    x = _tensor(a, xs)
    y = b(ys[0]) if b in (int, float, bool) else _tensor(b, ys)
    if op in ("floordiv", "mod") and not torch.is_floating_point(torch.as_tensor(f(x, 1))):
        # integer division by zero: PyTorch raises on the CPU, XLA gives a number; not tested
        y = y if isinstance(y, torch.Tensor) else y
        if (torch.as_tensor(y) == 0).any():
            return
    try:
        want = f(x, y)
    except NotImplementedError:  # no CPU kernel for the dtype (bool // bool): a value is fine
        return
    except (RuntimeError, TypeError) as error:
        with pytest.raises(type(error)):
            f(lazy(x), lazy(y) if isinstance(y, torch.Tensor) else y)
        return
    _same(f(lazy(x), lazy(y) if isinstance(y, torch.Tensor) else y), want)


def test_promotion_examples_from_the_issue():
    i = lazy(torch.tensor([1, 2, 3], dtype=torch.int32))
    assert (i + 1.5).dtype == torch.float32  # NumPy 2 would say float64
    assert (i / 2).dtype == torch.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5]
    assert (i // 2).tolist() == [0, 1, 1] and (-i // 2).tolist() == [-1, -1, -2]
    assert torch.div(-i, 2, rounding_mode="trunc").tolist() == [0, -1, -1]
    assert (i + torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float64  # 0-d CPU
    assert (lazy(torch.ones(2)) + torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float32


def test_in_place_op_that_would_narrow_is_refused_as_in_pytorch():
    i = lazy(torch.tensor([1, 2], dtype=torch.int32))
    with pytest.raises(RuntimeError, match="in-place|cast"):
        i.add_(1.5)
    assert i.tolist() == [1, 2]


@settings(deadline=None, max_examples=40)
@given(rows=st.integers(2, 4), cols=st.integers(2, 5), data=st.data())
def test_writes_through_views_reach_the_base_and_every_view(rows, cols, data):
    base = torch.arange(rows * cols, dtype=torch.float32).reshape(rows, cols)
    mine = lazy(base.clone())
    i = data.draw(st.integers(0, rows - 1))
    j0 = data.draw(st.integers(0, cols - 1))
    views = {
        "select": lambda t: t[i],
        "slice": lambda t: t[:, j0:],
        "step": lambda t: t[::2],
        "transpose": lambda t: t.t(),
        "view": lambda t: t.view(-1),
        "unsqueeze": lambda t: t.unsqueeze(0)[0],
        "chain": lambda t: t.t()[j0][: i + 1],
        "split": lambda t: t.split(1, dim=1)[j0],
        "detach": lambda t: t.detach(),
    }
    name = data.draw(st.sampled_from(sorted(views)))
    write = data.draw(st.sampled_from(["mul_", "add_", "zero_", "copy_", "fill_"]))
    other = data.draw(st.sampled_from(sorted(views)))
    results = []
    for t in (base, mine):
        v, w = views[name](t), views[other](t)  # w: a second view, read after the write
        if write == "copy_":
            v.copy_(torch.full(v.shape[-1:], 7.0).to(t.device))  # broadcast, from the host
        elif write == "fill_":
            v.fill_(-1.0)
        elif write == "zero_":
            v.zero_()
        else:
            getattr(v, write)(3)
        results.append((t.cpu(), v.cpu(), w.cpu()))
    for got, want in zip(results[1], results[0]):
        torch.testing.assert_close(got, want)


def test_views_made_before_a_write_see_it_and_clones_do_not():
    x = lazy(torch.zeros(2, 3))
    row, flat, copy = x[1], x.view(-1), x.clone()
    x.add_(1)
    row.mul_(5)
    assert x.tolist() == [[1, 1, 1], [5, 5, 5]]
    assert flat.tolist() == [1, 1, 1, 5, 5, 5] and copy.tolist() == [[0] * 3] * 2
    with pytest.raises(RuntimeError, match="single memory location"):
        x[0].expand(4, 3).add_(1)  # as PyTorch: writing an expanded view is refused


def test_gradients_and_requires_grad_as_pytorch():
    w0 = torch.randn(3, 2)
    x0 = torch.randn(4, 3)
    grads = []
    for move in (lambda t: t, lazy):
        w = move(w0.clone()).requires_grad_(True)
        x = move(x0.clone())
        with torch.no_grad():
            frozen = w * 2
        assert not frozen.requires_grad and w.requires_grad
        y = torch.tanh(x @ w).sum(dim=0).pow(2).mean()
        assert y.requires_grad and y.grad_fn is not None
        y.backward()
        grads.append(w.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


def test_observations_are_pytorch_methods():
    x = lazy(torch.tensor([[1.5, 2.0], [3.0, 4.0]]))
    cpu = x.cpu()
    assert type(cpu) is torch.Tensor and cpu.device.type == "cpu"
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]] and x[0, 0].item() == 1.5
    assert isinstance(x.numpy(), np.ndarray) and float(x.sum()) == 10.5 and bool(x[1, 1] > 3)
    assert "device='minilazy:0'" in repr(x) and "tensor([[1.5" in str(x)
    w = lazy(torch.ones(2)).requires_grad_(True)
    with pytest.raises(RuntimeError, match="requires grad"):
        w.numpy()  # as PyTorch: detach first


def test_factories_on_the_device_are_lazy():
    x = lazy(torch.ones(3))
    before = ml.metrics()
    made = [torch.arange(5, device=x.device), torch.zeros(2, 2, device=x.device),
            torch.ones(3, dtype=torch.int32, device="minilazy"),
            torch.full((2,), 7.0, device=x.device), torch.tril(torch.ones(3, 3, device=x.device))]
    assert all(t.device.type == "minilazy" for t in made)
    assert ml.metrics().executions == before.executions  # recorded, not run
    assert [t.cpu().tolist() for t in made] == [
        [0, 1, 2, 3, 4], [[0.0, 0.0], [0.0, 0.0]], [1, 1, 1], [7.0, 7.0],
        [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]
    assert made[2].dtype == torch.int32 and made[0].dtype == torch.int64


def test_recording_is_lazy_and_mark_step_runs_everything_once():
    x = lazy(torch.randn(4, 4))
    before = ml.metrics()
    ys = [torch.relu(x @ x + i) for i in range(3)]
    now = ml.metrics()
    assert now.executions == before.executions and now.ops_recorded > before.ops_recorded
    mark_step()
    assert ml.metrics().executions == before.executions + 1
    for i, y in enumerate(ys):
        ref = torch.relu(x.cpu() @ x.cpu() + i)
        torch.testing.assert_close(y.cpu(), ref)


def test_errors_are_pytorch_errors_at_the_call_and_lose_nothing():
    x = lazy(torch.ones(2, 3))
    pending = x * 4
    with pytest.raises(RuntimeError, match=r"broadcast|must match"):
        x + lazy(torch.ones(4))
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(2, 3)  # a CPU tensor that is not a scalar
    with pytest.raises(NotImplementedError, match="no rule for aten.sort"):
        x.sort()  # no rule, no decomposition: a clear error naming the op, never a wrong value
    with pytest.raises(NotImplementedError, match="no rule for prims.prod"):
        x.cumprod(0)  # a decomposition reaches a prims op: named too, never taken for aten's
    with pytest.raises(IndexError):
        x[5]
    assert pending.tolist() == [[4.0] * 3] * 2  # other pending work still materialises


def test_max_pool_indices_are_refused_not_wrong():
    x = lazy(torch.randn(1, 1, 4, 4))
    out, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    assert out.shape == (1, 1, 2, 2)
    with pytest.raises(NotImplementedError, match="max_pool2d_with_indices result"):
        idx.tolist()


def test_tables_name_aten_ops():
    for name in [*ATEN, *VIEWS]:
        packet = name.split(".")[0]
        assert hasattr(torch.ops.aten, packet), name


@pytest.mark.parametrize("call", [lambda t: t.max(), lambda t: t.amin(), lambda t: t.argmax(),
                                  lambda t: t.argmax(1), lambda t: t.max(1), lambda t: t.amax(1)])
def test_reductions_without_identity_refuse_no_elements_as_pytorch(call):
    host = torch.zeros(2, 0)
    with pytest.raises(Exception) as expected:
        call(host)
    with pytest.raises(type(expected.value)):
        call(lazy(host))


def test_eye_and_unsigned_dtypes_on_the_device():
    assert torch.eye(3, 2, device="minilazy").tolist() == torch.eye(3, 2).tolist()
    u = lazy(torch.tensor([1, 2], dtype=torch.uint16))
    assert u.dtype == torch.uint16 and (u * 3).cpu().tolist() == [3, 6]


def test_an_op_without_a_rule_inside_backward_is_an_error_at_first_use_not_an_abort(
        monkeypatch):
    # An exception out of one of autograd's C++ backward functions aborts the process (PyTorch's
    # device guard for a Python backend): the gradient holds the error instead.
    from minilazy.pytorch import aten

    monkeypatch.delitem(aten.ATEN, "sgn")  # abs's backward calls sgn
    monkeypatch.setattr(aten, "_decompositions", dict)  # and PyTorch decomposes it
    monkeypatch.setattr(aten.Aten, "cache", {})
    x = lazy(torch.tensor([1.0, -2.0])).requires_grad_(True)
    pending = lazy(torch.ones(2)) * 3
    x.abs().sum().backward()
    with pytest.raises(NotImplementedError, match="no rule for aten.sgn"):
        x.grad.tolist()
    with pytest.raises(NotImplementedError, match="no rule for aten.sgn"):
        x.grad * 2  # and anything made from it
    assert pending.tolist() == [3.0, 3.0]


def test_a_scalars_type_not_only_its_value_decides_the_dtype():
    # False == 0 and True == 1 as dict keys: the meta results must not be shared between them
    flag = torch.tensor([True, False])
    for scalar in (0, False, 1, True, 2.5, 0):
        want = flag + scalar
        got = lazy(flag) + scalar
        assert got.dtype == want.dtype and got.cpu().tolist() == want.tolist(), scalar


LOSSES_AND_LAYERS = {  # several run through PyTorch's own decompositions (torch._decomp)
    "bce_with_logits": lambda x, t: F.binary_cross_entropy_with_logits(x, t),
    "bce": lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), t),
    "smooth_l1": lambda x, t: F.smooth_l1_loss(x, t),
    "huber": lambda x, t: F.huber_loss(x, t),
    "l1": lambda x, t: F.l1_loss(x, t),
    "kl_div": lambda x, t: F.kl_div(F.log_softmax(x, -1), t, reduction="batchmean"),
    "softplus": lambda x, t: F.softplus(x).sum(),
    "elu": lambda x, t: F.elu(x).sum(),
    "hardtanh": lambda x, t: F.hardtanh(x).sum(),
    "logsigmoid": lambda x, t: F.logsigmoid(x).sum(),
    "mish": lambda x, t: F.mish(x).sum(),
    "cumsum": lambda x, t: (x.cumsum(1) * t).sum(),
    "stack": lambda x, t: torch.stack([x, t]).pow(2).sum(),
    "conv1d": lambda x, t: torch.nn.Conv1d(4, 2, 2).to(x.device)(x[None]).sum(),
    "adaptive_avg_pool": lambda x, t: F.adaptive_avg_pool2d(x.reshape(1, 1, 4, 3), 1).sum(),
    "batch_norm_1d": lambda x, t: torch.nn.BatchNorm1d(3).to(x.device)(x).pow(2).sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES_AND_LAYERS))
def test_losses_and_layers_and_their_gradients_match_eager(name):
    xh, th = torch.randn(4, 3), torch.rand(4, 3)
    results = []
    for move in (lambda a: a, lazy):
        torch.manual_seed(1)  # the same initial weights for a layer made inside
        x = move(xh.clone()).requires_grad_(True)
        y = LOSSES_AND_LAYERS[name](x, move(th.clone()))
        y.backward()
        results.append((y.detach().cpu(), x.grad.cpu()))
    torch.testing.assert_close(results[1], results[0], rtol=1e-5, atol=1e-5)


def test_an_expanded_view_reads_its_base_and_reports_stride_zero():
    for move in (lambda t: t, lazy):
        a = move(torch.zeros(3))
        b = a.expand(2, 3)
        a.add_(1)
        assert b.cpu().tolist() == [[1.0] * 3] * 2 and b.stride() == (0, 1)
