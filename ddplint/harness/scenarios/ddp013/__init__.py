"""DDP013: the global rank taken from LOCAL_RANK. No bundled scenario: on one node LOCAL_RANK
equals RANK, so the symptom needs two or more nodes."""

from ...script_symptoms import unobserved

RULE = "DDP013"

script_symptom = unobserved("needs two or more nodes (on one node LOCAL_RANK equals RANK)")
