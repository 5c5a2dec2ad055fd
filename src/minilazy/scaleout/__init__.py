"""Scale-out: sharding annotations on meshes and the multi-process launcher."""
