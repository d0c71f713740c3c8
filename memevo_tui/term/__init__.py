"""The terminal and its plumbing: pasted text made safe, the driver that ends the
process when the terminal goes away, keys typed ahead, a key's current binding, and
Textual's private API behind ``compat`` (each use checked by ``tests/test_compat.py``)."""
