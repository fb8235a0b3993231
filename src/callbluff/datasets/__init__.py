"""Dataset loaders addressable by spec strings (see :mod:`callbluff.datasets.base`)."""

from callbluff.datasets.base import DataError, Dataset, load, loader_names, parse_spec, register_loader

# importing the loader modules registers their spec prefixes
from callbluff.datasets import asap, demo, generic, mohler, openqa, squad  # noqa: F401  isort: skip
from callbluff.datasets.generic import from_hf

__all__ = ["DataError", "Dataset", "from_hf", "load", "loader_names", "parse_spec", "register_loader"]
