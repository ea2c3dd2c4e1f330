"""The mcuflow version (recorded in measurement and validation records)."""

__version__ = "0.1.0"
