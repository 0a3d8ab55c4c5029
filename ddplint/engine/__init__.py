"""Linting a file: reading and decoding it, choosing its rules, one parse and one walk,
noqa, configuration and the results cache."""
