"""Every command explains itself (issue 48): ``--help`` groups its options in panels, lists
the choices of its options, and ends with examples of the command itself."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.models import MODEL_NAMES

runner = CliRunner()

#: each command, the option panels its help shows, and choices it must list
HELP = {
    ("audit",): ("Built-in target", "Your own system", "Attacks and output", "lightgcn"),
    ("run",): ("Output", "Where it runs", "flower-sim", "inprocess or ray", "Studies: audit,"),
    ("train",): ("Data and model", "Output", *MODEL_NAMES),
    ("matrix",): ("Data and model", "Output", "configs/matrix/ml-100k.yaml"),
    ("synthesize",): ("Data and model", "Privacy of the release", "Output"),
    ("devices",): ("Output", "docs/flower.md"),
    ("report",): ("docs/reading-a-report.md",),
    ("verify-erasure",): ("Your deletion (files)", "Built-in demonstration", "Attack and output", "docs/erasure.md"),
    ("datasets", "list"): ("Data and model",),
    ("datasets", "describe"): ("Data and model",),
    ("datasets", "download"): (),
}


@pytest.mark.parametrize("command", list(HELP), ids=" ".join)
def test_each_command_help_has_its_panels_choices_and_examples(command):
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = result.stdout
    for fragment in HELP[command]:
        assert fragment in text, (fragment, text)
    examples = text.split("Examples:", 1)[1].splitlines()
    assert any(line.strip().startswith("recprivacy " + " ".join(command)) for line in examples), text


def test_every_command_is_covered():
    """A new command gets its examples too (add it to HELP)."""
    names = {(c.name or c.callback.__name__,) for c in app.registered_commands}
    names |= {(group.name, c.name) for group in app.registered_groups for c in group.typer_instance.registered_commands}
    assert names - set(HELP) <= {("serve",)}, names - set(HELP)
