"""Applying fixes: the fix loop, quick fixes for editors and `--add-noqa`."""
