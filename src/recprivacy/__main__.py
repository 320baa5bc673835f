"""``python -m recprivacy``: the same command line as ``recprivacy``."""

from recprivacy.cli import app

app(prog_name="recprivacy")
