"""The dashboard's views: one module each, independent of one another."""
