"""Home module of the dataclasses and enums the strategies create on the fly.

``strategies._pojo`` sets each generated class here as an attribute under its qualified name
(the most recently created version of a name wins), so ``reference.lookup_type`` finds it by
``strategies._generated:Name`` without importing anything. Pickling does not depend on this
module: generated classes pickle as their definition (see ``strategies._pojo``), so a fresh
process (a Spark worker) rebuilds the same class.
"""
