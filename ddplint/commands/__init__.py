"""The user-facing layer: the command line, the flake8 plugin, notebooks, output formats,
the parallel pool and the generated docs."""
