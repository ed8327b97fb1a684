"""devlint: finds PyTorch device-placement bugs by reading code."""

__version__ = "0.1.0"
