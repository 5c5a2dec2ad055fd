"""Window arithmetic: a convolution's result shape and the paddings its VJPs need.

One of core's op rules, beside ``index_rules.py``: integer arithmetic on shapes and attributes,
shared by the shape rule (``infer.py``), the VJP rule (``api/convolution.py``) and the NumPy
reference, so the three agree by construction. Never imports jax.
"""

from __future__ import annotations

from minilazy.core.attrs import Conv
from minilazy.core.ir import Shape, ShapeError


def dilated(n: int, d: int) -> int:
    """The length of ``n`` elements spaced ``d`` apart (``d - 1`` zeros between neighbours).

    Example:
        >>> dilated(3, 2), dilated(0, 2)
        (5, 0)
    """
    return 0 if n == 0 else (n - 1) * d + 1


def conv_shape(lhs: Shape, rhs: Shape, c: Conv) -> Shape:
    """The result shape of ``CONV`` on an input ``lhs`` and a filter ``rhs`` (torch's layouts).

    Raises ``ShapeError`` naming both shapes when they do not fit together.

    Example:
        >>> conv_shape((1, 2, 5), (4, 2, 3), Conv((2,), ((1, 1),), (1,), (1,), 1, 1))
        (1, 4, 3)
    """
    def fail(why: str) -> ShapeError:
        return ShapeError(f"conv: {why}: input {list(lhs)}, filter {list(rhs)}")

    nd = len(lhs) - 2
    if nd < 1 or len(rhs) != len(lhs):
        raise fail("input and filter need the same number of dimensions, at least 3")
    if not len(c.strides) == len(c.padding) == len(c.lhs_dilation) == len(c.rhs_dilation) == nd:
        raise fail(f"strides, padding and dilations need one entry per spatial axis ({nd})")
    (n, channels), (out, per_group) = lhs[:2], rhs[:2]
    groups = c.groups * c.batch_groups
    if channels != per_group * c.groups:
        raise fail(f"{channels} input channels are not {c.groups} group(s) of the filter's "
                   f"{per_group}")
    if out % groups or n % c.batch_groups:
        raise fail(f"the filter's {out} output channels do not split into {groups} groups")
    spatial = []
    for k in range(nd):
        size = dilated(lhs[2 + k], c.lhs_dilation[k]) + sum(c.padding[k])
        window = dilated(rhs[2 + k], c.rhs_dilation[k])
        if window == 0 or size < window:
            raise fail(f"along spatial axis {k} the window ({window}) does not fit in the padded "
                       f"input ({size})")
        spatial.append((size - window) // c.strides[k] + 1)
    return (n // c.batch_groups, out, *spatial)


def input_vjp_padding(c: Conv, lhs: Shape, rhs: Shape, out: Shape
                      ) -> tuple[tuple[int, int], ...]:
    """The padding of the convolution that maps a cotangent back onto the input (JAX's rule).

    Example:
        >>> input_vjp_padding(Conv((1,), ((1, 1),), (1,), (1,), 1, 1), (1, 1, 5), (1, 1, 3),
        ...                   (1, 1, 5))
        ((1, 1),)
    """
    pads = []
    for k, (lo, _) in enumerate(c.padding):
        before = dilated(rhs[2 + k], c.rhs_dilation[k]) - lo - 1
        after = (dilated(lhs[2 + k], c.lhs_dilation[k]) + dilated(rhs[2 + k], c.rhs_dilation[k])
                 - 1 - dilated(out[2 + k], c.strides[k]) - before)
        pads.append((before, after))
    return tuple(pads)


def filter_vjp_padding(c: Conv, lhs: Shape, rhs: Shape, out: Shape
                       ) -> tuple[tuple[int, int], ...]:
    """The padding of the convolution of input and cotangent that gives the filter's gradient.

    Example:
        >>> filter_vjp_padding(Conv((1,), ((1, 1),), (1,), (1,), 1, 1), (1, 1, 5), (1, 1, 3),
        ...                    (1, 1, 5))
        ((1, 1),)
    """
    return tuple((lo, dilated(out[2 + k], c.strides[k]) - dilated(lhs[2 + k], c.lhs_dilation[k])
                  + dilated(rhs[2 + k], c.rhs_dilation[k]) - lo - 1)
                 for k, (lo, _) in enumerate(c.padding))
