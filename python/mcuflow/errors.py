"""Errors raised by mcuflow's Python layer.

Every message is one line that names what is wrong and where (the model's source line when
there is one), so it can be shown to the user as is.
"""


class McuflowError(Exception):
    """Base class of every error mcuflow raises on purpose."""


class UnsupportedModelError(McuflowError):
    """The exported model uses an op, argument, dtype or dynamic shape mcuflow cannot compile."""


class CalibrationError(McuflowError):
    """The calibration data is empty, misshaped, of the wrong dtype or not finite."""


class InputError(McuflowError):
    """An input given to mcuflow (file, argument, array) is not what was expected."""


class BudgetError(McuflowError):
    """No per-layer precision choice (precision or weights "mixed") meets the compile budgets."""


class DeviceError(McuflowError):
    """Building or running firmware failed (message names the board and the cause)."""


def run_failure(error: str, sample: int) -> McuflowError:
    """The one message for a runtime error while sample `sample` ran (`error`: the runtime's
    error name, e.g. non_finite_input), on the host and on a board alike."""
    if error == "non_finite_input":  # the runtime's rule: every float32 input value is finite
        return InputError(f"an input of sample {sample} contains NaN or Inf")
    if error == "index_out_of_range":  # an embedding id outside its table, refused by the run
        return InputError(f"an id of sample {sample} lies outside its embedding table")
    return McuflowError(f"sample {sample}: runtime error {error}")


__all__ = ["McuflowError", "UnsupportedModelError", "CalibrationError", "InputError", "BudgetError", "DeviceError"]
