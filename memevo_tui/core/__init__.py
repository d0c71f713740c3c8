"""The dashboard's core, with no Textual and no Rich: the shared state, the verbs and
what they plan, the rules of each view (filters, sorts, review, the inbox), export,
the app's own state and cache directories, the live poller and serve's rules. The
command line uses it as the dashboard does; ``pyproject.toml``'s contracts keep
Textual out of it."""
