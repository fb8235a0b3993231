"""Dataset loaders addressable by spec strings (see :mod:`callbluff.datasets.base`)."""

from callbluff.datasets.base import Dataset, DataError, load, loader_names, parse_spec, register_loader

# importing the loader modules registers their spec prefixes
from callbluff.datasets import asap  # noqa: E402,F401  isort: skip

__all__ = ["Dataset", "DataError", "load", "loader_names", "parse_spec", "register_loader"]
