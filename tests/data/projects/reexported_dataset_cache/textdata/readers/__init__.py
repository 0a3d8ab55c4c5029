from .squad import AnswerIndex, QuestionCache
