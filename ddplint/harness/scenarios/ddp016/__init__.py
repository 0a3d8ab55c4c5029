"""DDP016: a DataLoader collate_fn or worker_init_fn that cannot be pickled for spawned
workers. No bundled scenario (the rule offers no fix); a script run shows the pickling error."""

from ...script_symptoms import exception

RULE = "DDP016"

script_symptom = exception(("pickl",), "pickling error")
