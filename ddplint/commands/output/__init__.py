"""Formatters that turn diagnostics into text for people and machines."""
