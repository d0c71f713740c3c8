"""Recall as pi runs it: the words of each record, the index, and what is selected."""
