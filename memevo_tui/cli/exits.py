"""The command line's exit codes: 0 done, 1 refused by the store's rules (with pi's
message), 2 could not run."""

EXIT_OK, EXIT_REFUSED, EXIT_CANNOT_RUN = 0, 1, 2
