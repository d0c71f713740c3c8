"""A record as pi stores it: the model, its quality, decoding and checking rows."""
