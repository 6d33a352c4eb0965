"""The error the TRL-style trainers raise for a user's mistake (a config
field, a dataset column, a reward function's result): a message and a
hint, shown without a traceback by `pdg train`."""


class TrainerConfigError(ValueError):
    def __init__(self, message: str, hint: str = ""):
        self.message, self.hint = message, hint
        super().__init__(f"{message} (hint: {hint})" if hint else message)
