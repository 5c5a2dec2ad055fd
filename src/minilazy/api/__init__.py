"""The Array API namespace: functions that record ops on tensors (creation, elementwise, ...)."""
