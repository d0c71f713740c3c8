"""The store's past: the event log walked to any moment, kept between runs, and the timeline."""
