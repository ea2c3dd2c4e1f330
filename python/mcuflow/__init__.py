"""mcuflow: PyTorch models on Arm Cortex-M microcontrollers.

    program = mcuflow.compile(torch.export.export(model, example), target="cortex-m55",
                              calibration=samples)
    program.save("model.mfp"); program.run(x); print(program.summary())
"""

from .api import Program, compile
from .errors import CalibrationError, InputError, McuflowError, UnsupportedModelError
from .validate import validate
from .version import __version__

__all__ = ["compile", "Program", "validate", "McuflowError", "UnsupportedModelError", "CalibrationError", "InputError",
           "__version__"]
