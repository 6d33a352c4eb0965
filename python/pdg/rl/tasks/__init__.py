"""Tasks with exact checkers, made offline by seeded generators: the data
the RL examples and tests train on (nothing is downloaded).

    from pdg.rl.tasks import WordProblems, final_answer

    task = WordProblems()
    train = task.problems("train", 1000, seed=0)     # Problem(question, solution, answer)
    held_out = task.problems("held_out", 200, seed=0, unique=True)
    final_answer("3*4=12. 12+5=17. #### 17")         # 17
"""

from .answers import correct_answer, final_answer
from .word_problems import Problem, WordProblems

__all__ = ["Problem", "WordProblems", "correct_answer", "final_answer"]
