"""One file's libcst tree: its walk, its semantic model (scopes, bindings, qualified
names) and the edits made on it."""
