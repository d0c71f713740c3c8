"""The learning queue: captures, runs, their budget and policy, and the status figures."""
