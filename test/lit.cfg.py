# lit configuration for pdg's IR tests: `pdg-opt` and `FileCheck` come from
# the virtual environment running lit.
import os
import sys

import lit.formats

config.name = "pdg"
# pip's lit rejects ShTest(True): run RUN lines with lit's internal shell.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["python", "mpi", "lit.cfg.py", "Inputs"]  # mpi: pytest under mpiexec

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
config.substitutions.append(("FileCheck", os.path.join(bin_dir, "filecheck")))
config.substitutions.append(("%python", sys.executable))
