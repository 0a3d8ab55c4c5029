"""The outer project's own script: it vendors `vendor/tuplewrap`, a project of its own (its
pyproject.toml), whose files are linted with that project's index."""

print("outer")
