"""The terminal and its plumbing, below the core: pasted text made safe, the driver
that ends the process when the terminal goes away, and Textual's private API behind
``compat`` (each use checked by ``tests/test_compat.py``)."""
