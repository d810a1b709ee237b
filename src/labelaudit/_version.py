"""The version of labelaudit (a module of its own, so the lowest floors can read it)."""

__version__ = "0.1.0"
