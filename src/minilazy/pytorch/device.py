"""The ``minilazy`` device: PyTorch's spare device slot (``PrivateUse1``), named for minilazy.

PyTorch keeps one device type for a backend it does not ship. Named ``minilazy``, with the
device guard, hooks and module PyTorch provides for a backend written in Python (the guard is
what indexing and autograd ask for), it is the device of every lazy tensor: ``x.device`` is
``minilazy:0``, and ``x.to("minilazy")`` or ``module.to("minilazy")`` moves data onto it.

Example:
    >>> DEVICE
    device(type='minilazy', index=0)
"""

from __future__ import annotations

import torch
from torch.utils import backend_registration

BACKEND = "minilazy"


def _register() -> torch.device:
    name = torch._C._get_privateuse1_backend_name()
    if name == "privateuseone":
        backend_registration._setup_privateuseone_for_python_backend(rename=BACKEND)
    elif name != BACKEND:
        raise ImportError(f"PyTorch's spare device is already named {name!r} by another "
                          "library; minilazy.pytorch needs it")
    return torch.device(BACKEND, 0)


DEVICE = _register()
