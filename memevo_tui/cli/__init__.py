"""Command-line verbs: a scriptable mirror of pi's ``/memory`` command.

Exit codes: 0 done, 1 refused by the store's rules, 2 could not run. On a terminal,
tables fit the width; piped, every line is whole (tab-separated, full ids, nothing
clipped) and counts and footers go to stderr, so ``wc``, ``cut`` and ``awk`` see
only records.
"""

from .parser import add_verbs
from .run import EXIT_CANNOT_RUN, EXIT_OK, EXIT_REFUSED, execute

__all__ = ["EXIT_CANNOT_RUN", "EXIT_OK", "EXIT_REFUSED", "add_verbs", "execute"]
