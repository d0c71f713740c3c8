"""pi's own files beside the store: its sessions, the turns replayed, and where a
record came from."""
