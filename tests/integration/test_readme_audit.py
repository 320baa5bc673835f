"""The README's "Audit your own recommender" examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from recprivacy.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"


def section_blocks(language: str) -> list[str]:
    text = README.read_text().split("## Audit your own recommender", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_python_example_audits_an_unregistered_puresvd(tmp_path, monkeypatch):
    (code,) = section_blocks("python")
    assert len([line for line in code.splitlines() if line.strip()]) < 25  # PureSVD and its audit
    monkeypatch.chdir(tmp_path)
    exec(compile(code.replace("options={", 'sections=["utility", "membership", "attribute"], options={'), "README", "exec"), {})
    (run,) = (tmp_path / "runs").iterdir()
    report = (run / "report.md").read_text()
    assert "user-level membership inference" in report and "attribute inference" in report


def test_lists_only_command_line_example(tmp_path, monkeypatch):
    (command,) = section_blocks("bash")
    args = command.replace("\\\n", " ").split()[1:]
    rng = np.random.default_rng(0)
    users, items = np.repeat(np.arange(60), 25), rng.integers(0, 80, 60 * 25)
    frame = pd.DataFrame({"user_id": users, "item_id": items}).drop_duplicates()
    frame.to_csv(tmp_path / "interactions.csv", index=False)
    frame.groupby("user_id").head(2).to_csv(tmp_path / "test.csv", index=False)
    lists = [(u, r + 1, int(i)) for u in range(60) for r, i in enumerate(rng.permutation(80)[:20])]
    pd.DataFrame(lists, columns=["user_id", "rank", "item_id"]).to_csv(tmp_path / "lists.csv", index=False)
    pd.DataFrame({"user_id": range(40)}).to_csv(tmp_path / "members.csv", index=False)
    pd.DataFrame({"user_id": range(60), "gender": rng.choice(["M", "F"], 60), "age": rng.choice([18, 25, 35], 60)}).to_csv(
        tmp_path / "users.csv", index=False)
    shown = [(u, s, int(i), int(rng.random() < 0.3)) for u in range(60) for s in range(8) for i in rng.permutation(80)[:10]]
    pd.DataFrame(shown, columns=["user_id", "slate_id", "item_id", "clicked"]).to_csv(tmp_path / "exposures.csv", index=False)
    monkeypatch.chdir(tmp_path)
    options = ["study_options.sections=[utility,attribute,membership,exposure]", "study_options.membership.k=20",
               "study_options.exposure={dim: 8, n_epochs: 1, ratios: [0.5]}"]  # fmt: skip
    result = CliRunner().invoke(app, args + sum((["--set", o] for o in options), []))
    assert result.exit_code == 0, result.output
    assert "Run written to" in result.stdout
    (run,) = (tmp_path / "runs").iterdir()
    report = (run / "report.md").read_text()
    assert "attribute inference" in report and "exposure leakage" in report
    assert "user-level membership inference" in report and "`itemcf`, the adversary's own choice" in report
