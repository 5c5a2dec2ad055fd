"""Scale-out: meshes and shardings, programs over a mesh, and several processes.

``meshes`` (``ml.Mesh``, ``Sharding``) and ``sharding`` (``ml.mark_sharding``) are what users
call; ``placement`` (programs over a mesh, ``SHARD``'s rules) and ``processes`` (joining a
launch) are parts ``import minilazy`` installs into core's lowering and runtime; ``cluster``
and ``launch`` are ``python -m minilazy.launch``'s.
"""
