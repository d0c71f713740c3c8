"""memevo-tui: a dashboard for pi-memory-evolution's memory store."""

__version__ = "0.1.0"
