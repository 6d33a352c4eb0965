"""DPOConfig: the training arguments of rl.DPOTrainer, by TRL's names (see
trl_config.py for the rules: TRL's names, defaults and meanings; a TRL
option pdg lacks is refused when set)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .trl_config import TrainingArguments

LOSS_TYPES = ("sigmoid", "hinge", "ipo", "robust")


@dataclass
class DPOConfig(TrainingArguments):
    # Preference pairs per optimizer step.
    per_device_train_batch_size: int = 8
    beta: float = 0.1
    # TRL's spelling: a name, or a list of one name (several combined by
    # loss_weights are not supported).
    loss_type: str | list[str] = field(default_factory=lambda: ["sigmoid"])
    # The chance a preference label is flipped ("robust" reads it; as in
    # TRL, "sigmoid", "hinge" and "ipo" do not).
    label_smoothing: float = 0.0
    # Tokens of prompt + completion kept (the start: TRL's "keep_start");
    # a pair whose prompt alone fills it is dropped. None: no limit.
    max_length: int | None = 1024
    # Tokens of the prompt kept (its end), before max_length applies.
    # None: no limit.
    max_prompt_length: int | None = None
    truncation_mode: str = "keep_start"
    loss_weights: list[float] | None = None
    f_divergence_type: str = "reverse_kl"
    ld_alpha: float | None = None
    use_weighting: bool = False
    precompute_ref_log_probs: bool = False
    shuffle_dataset: bool = True  # pdg's: TRL's trainer always shuffles

    def __post_init__(self):
        if isinstance(self.loss_type, str):
            self.loss_type = [self.loss_type]
        super().__post_init__()

    @property
    def loss(self) -> str:
        """The one loss type."""
        return self.loss_type[0]

    def _check(self) -> None:
        super()._check()
        need = self._need
        need(
            isinstance(self.loss_type, list) and len(self.loss_type) == 1,
            f"loss_type {self.loss_type!r}: combining several loss types is not supported",
            "give one loss type",
        )
        need(
            self.loss in LOSS_TYPES,
            f"loss_type '{self.loss}' is not supported",
            f"use one of {', '.join(LOSS_TYPES)}",
        )
        need(self.beta > 0, f"beta must be positive, got {self.beta}")
        need(
            0.0 <= self.label_smoothing < 0.5,
            f"label_smoothing must be in [0, 0.5), got {self.label_smoothing}",
        )
        for name in ("max_length", "max_prompt_length"):
            value = getattr(self, name)
            if value is not None:
                self._check_integers(name)
                need(value >= 2, f"{name} must be at least 2 (or None), got {value}")
        for name, default in (
            ("truncation_mode", "keep_start"),
            ("loss_weights", None),
            ("f_divergence_type", "reverse_kl"),
            ("ld_alpha", None),
            ("use_weighting", False),
            ("precompute_ref_log_probs", False),
        ):
            value = getattr(self, name)
            need(
                value == default,
                f"{name}={value!r} is not supported",
                f"pdg's DPOTrainer runs {name}={default!r}",
            )
