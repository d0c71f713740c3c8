"""Every write, as pi writes it: the transaction, the curation verbs, the redactor and a purge."""
