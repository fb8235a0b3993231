"""Dataset loaders addressable by spec strings (see :mod:`callbluff.datasets.base`)."""

from callbluff.datasets.base import Dataset, DataError, load, loader_names, parse_spec, register_loader

__all__ = ["Dataset", "DataError", "load", "loader_names", "parse_spec", "register_loader"]
