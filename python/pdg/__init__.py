"""pdg: an ahead-of-time compiler for RL fine-tuning programs.

Programs are recurrence equations over symbolic dimensions, held in the `pdg`
MLIR dialect. `pdg.ir` creates contexts and parses IR; `pdg.dialects.pdg`
holds the op classes; `pdg.cli` the command lines.
"""

__version__ = "0.1.0"
