"""``python -m callbluff.cli``: the ``callbluff`` command."""

import sys

from callbluff.cli import app

if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
