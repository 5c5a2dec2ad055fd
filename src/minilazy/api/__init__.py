"""The Array API namespace: functions that record ops on tensors (creation, elementwise, ...)."""

# NumPy's functions on a tensor (``Tensor.__array_function__``) look their policy up here.
import minilazy.api.numpy_policy  # noqa: F401
