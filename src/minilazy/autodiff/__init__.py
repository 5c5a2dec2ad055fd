"""Reverse-mode autodiff over recorded graphs: the tape (``grad``) and the VJP rules."""
