"""pytest setup for the Python tests: import mcuflow from the source tree and the test models."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_PYTHON = os.path.abspath(os.path.join(_HERE, "..", "..", "python"))

for p in (_HERE,):
    if p not in sys.path:
        sys.path.insert(0, p)
