"""DDP015: a submodule that takes no part in the forward, without find_unused_parameters. No
bundled scenario (the rule offers no fix); a script run shows DDP's own error."""

from ...script_symptoms import exception

RULE = "DDP015"

script_symptom = exception(("Expected to have finished reduction",), "unused-parameter error")
