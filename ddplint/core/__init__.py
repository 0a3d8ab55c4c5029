"""The vocabulary every layer shares: findings and fixes, the torch catalog, hashing and
child processes. Imports nothing else from ddplint."""
