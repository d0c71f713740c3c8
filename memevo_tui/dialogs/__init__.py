"""The dialogs: modal screens that ask, tell or pick, over the dashboard or another
screen (they import no view, and no screen of the dashboard's)."""
