"""What a function's name says it is for, where code gives no better evidence."""

# Functions whose names say they evaluate: test-time work, not training.
EVALUATION_WORDS = ("eval", "valid", "test", "infer", "predict")


def evaluates(name: str) -> bool:
    """Whether a function named `name` (`evaluate`, `validate`, `test_epoch`) evaluates."""
    lowered = name.lower()
    return any(word in lowered for word in EVALUATION_WORDS)
