"""The demo store and its learner (made for the tour, never a user's file)."""
