"""The ``table`` family: certify any table implementation against the SEP-30 reference model.

>>> from conformance import TableSubject, certify_table
>>> results = certify_table(TableSubject(lambda r, w: RemoteTable(r, w), keys, values, updates, apply))
"""

from ._certify import certify_table
from ._subject import TableSubject, TableSubjectError

__all__ = ["TableSubject", "TableSubjectError", "certify_table"]
