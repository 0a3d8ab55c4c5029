from .readers import AnswerIndex, QuestionCache

__all__ = ["AnswerIndex", "QuestionCache"]
