"""Audit your own recommender: a numpy PureSVD that recprivacy never registers, audited from
Python and from its served lists on the command line; a built-in model through the same API
equals ``recprivacy audit`` number for number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from recprivacy import Audit, Target
from recprivacy.cli import app
from recprivacy.config import load_config
from recprivacy.errors import ConfigError
from recprivacy.experiments import run_study
from recprivacy.experiments.results import Results
from recprivacy.experiments.train import fit_model, hold_out_users, prepare_data
from recprivacy.models import SRGNN

SYNTHETIC = {"n_users": 300, "n_items": 200, "n_interactions": 15000}
OPTIONS = {"membership": {"k": 20, "n_factors": 16}, "attribute": {"k": 10, "attackers": ["knn"], "seeds": 2}}
SECTIONS = ["utility", "membership", "attribute", "exposure"]


class PureSVD:
    """Item-item PureSVD in plain numpy: a new user is served by folding in their history."""

    def __init__(self, frame: pd.DataFrame, factors: int = 16) -> None:
        self.items = np.unique(frame["item_id"])
        users, rows = np.unique(frame["user_id"], return_inverse=True)
        x = np.zeros((len(users), len(self.items)))
        x[rows, np.searchsorted(self.items, frame["item_id"])] = 1.0
        self.vt = np.linalg.svd(x, full_matrices=False)[2][:factors]

    def recommend(self, histories: list[list[int]], k: int) -> np.ndarray:
        h = np.zeros((len(histories), len(self.items)))
        for row, items in enumerate(histories):
            h[row, np.searchsorted(self.items, items)] = 1.0
        scores = np.where(h > 0, -np.inf, h @ self.vt.T @ self.vt)
        return self.items[np.argsort(-scores, axis=1, kind="stable")[:, :k]]


def synthetic_split(seed: int = 0):
    """The audit's data laid out as a user has them: all interactions, test rows, members."""
    config = load_config(base={"dataset": {"name": "synthetic", "options": SYNTHETIC}, "seed": seed})
    data = hold_out_users(prepare_data(config, Results(name="x", study="audit", config={})), 0.3, seed)
    frame = data.full.to_frame()[["user_id", "item_id", "timestamp"]]
    test = data.test.to_frame()[["user_id", "item_id"]]
    members = data.full.user_ids[np.unique(data.train.users)]
    non_members = data.full.user_ids[data.heldout_users]
    features = data.full.user_features.assign(user_id=data.full.user_ids)
    return data, frame, test, members, non_members, features


@pytest.fixture(scope="module")
def own():
    data, frame, test, members, non_members, features = synthetic_split()
    results = Audit(Target.from_training(PureSVD), frame, members, non_members, test=test, user_features=features,
                    sections=SECTIONS, options=OPTIONS).run()  # fmt: skip
    return data, frame, test, members, non_members, features, results


def risk_attacks(results: Results) -> list[str]:
    return [row[0] for row in results.tables["risk_summary"].rows]


def test_own_model_is_audited_with_every_applicable_section(own, tmp_path):
    *_, results = own
    attacks = risk_attacks(results)
    assert any(a.startswith("target utility") for a in attacks)
    assert any(a.startswith("user-level membership inference") for a in attacks)  # shadows trained with PureSVD
    assert any(a.startswith("attribute inference") for a in attacks)
    assert results.metrics["utility/recall@10"] > 0
    summary = next(s for s in results.sections if s.title == "Risk summary").text
    assert "`exposure` needs logged exposures" in summary
    run = results.write(tmp_path / "runs")
    assert {"results.json", "report.md", "report.html", "config.yaml"} <= {p.name for p in run.iterdir()}
    assert "Skipped sections" in (run / "report.md").read_text()


def served_lists(model: PureSVD, frame: pd.DataFrame, train: pd.DataFrame, members, non_members) -> pd.DataFrame:
    """What ``model`` served: members from their training rows, non-members from their whole history."""
    served = []
    for users, history in ((members, train), (non_members, frame)):
        histories = history.sort_values("timestamp", kind="stable").groupby("user_id")["item_id"].agg(list)
        lists = model.recommend([histories[u] for u in users], 20)
        served += [(u, r + 1, i) for u, row in zip(users, lists) for r, i in enumerate(row)]
    return pd.DataFrame(served, columns=["uid", "rank", "item_id"])


def audit_files(tmp_path, tables: dict[str, pd.DataFrame], *args: str, **study_options) -> Results:
    """``recprivacy audit`` on ``tables`` written as CSV files (user column ``uid``), the run's results."""
    (tmp_path / "logs").mkdir()
    files = {name: tmp_path / "logs" / f"{name}.csv" for name in tables}
    for name, table in tables.items():
        table.rename(columns={"user_id": "uid"}).to_csv(files[name], index=False)
    config = tmp_path / "audit.yaml"
    config.write_text(yaml.safe_dump({"name": "logged", "study": "audit", "noise": "simulation", "study_options": study_options}))
    options = [[f"--{name.replace('_', '-')}", files[name]] for name in files]
    result = CliRunner().invoke(app, ["audit", *sum(options, []), *args, "--user-col", "uid", "--config", config,
                                      "--out", tmp_path / "runs"])  # fmt: skip
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "runs").iterdir()
    return Results.from_json((run / "results.json").read_text())


def test_served_lists_on_the_command_line_give_the_same_numbers(own, tmp_path):
    """A lists-only audit: no model code; utility and attribute equal the Python audit's."""
    data, frame, test, members, non_members, features, results = own
    train = frame[frame["user_id"].isin(members)].merge(test.assign(t=1), how="left", on=["user_id", "item_id"])
    train = train[train["t"].isna()].drop(columns="t")
    lists = served_lists(PureSVD(train), frame, train, members, non_members)
    tables = {"interactions": frame, "lists": lists, "members": pd.DataFrame({"user_id": members}), "test": test,
              "user_features": features}  # fmt: skip
    logged = audit_files(tmp_path, tables, sections=SECTIONS, **OPTIONS)
    shared = [m for m in results.metrics if m.startswith(("utility/", "attribute/"))]
    assert shared and {m: logged.metrics[m] for m in shared} == {m: results.metrics[m] for m in shared}
    # no model code and no shadow algorithm: the adversary's shadow is the candidate that serves most like the target
    text = next(s for s in logged.sections if s.title.startswith("Membership")).text
    assert "chosen by mimicry" in text and "--shadow-model" in text


def test_lists_with_a_shadow_algorithm_give_the_model_objects_membership_numbers(tmp_path):
    """Assumption II: an adversary who trains itemcf shadows measures the same leakage from the
    served lists on the command line as from the fitted model object; no model code is needed."""
    _, frame, _, members, non_members, features = synthetic_split()
    train = frame[frame["user_id"].isin(members)]  # members trained on all their rows, as the lists were served
    model = PureSVD(train)
    options = {**OPTIONS, "membership": {**OPTIONS["membership"], "shadow_algorithm": "itemcf"}}
    sections = ["membership", "attribute"]
    direct = Audit(Target.from_model(model), frame, members, non_members, user_features=features, sections=sections,
                   options=options, noise="simulation").run()  # fmt: skip
    tables = {"interactions": frame, "lists": served_lists(model, frame, train, members, non_members),
              "members": pd.DataFrame({"user_id": members}), "user_features": features}  # fmt: skip
    logged = audit_files(tmp_path, tables, "--shadow-model", "itemcf", sections=sections, **OPTIONS)
    membership = [m for m in direct.metrics if m.startswith("membership/")]
    assert "membership/served/mlp/auc" in membership and "membership/served/lira/auc" in membership
    np.testing.assert_equal(logged.metrics, direct.metrics)
    text = next(s for s in logged.sections if s.title.startswith("Membership")).text
    assert "`itemcf`, the adversary's own choice and not the target's algorithm" in text


def test_a_target_that_cannot_serve_new_users_is_refused(own):
    data, frame, test, members, non_members, *_ = own
    with pytest.raises(ConfigError, match=r"^Target.from_model: SRGNN cannot serve users it was not trained on; "
                                          r"expected a recommend_histories\(histories, k\) method"):  # fmt: skip
        Target.from_model(SRGNN(user_mode="id"))  # a learned row per trained user, none for a new one

    def by_user_id(histories, k):
        raise KeyError("unknown user")

    audit = Audit(Target.from_model(by_user_id), frame, members, non_members, sections=["attribute"])
    with pytest.raises(ConfigError, match=r"cannot serve a user it was not trained on \(KeyError: 'unknown user'\)"):
        audit.run()


def test_a_registry_model_through_the_api_equals_the_audit_study():
    study_options = {"sections": ["utility", "membership", "attribute"], **OPTIONS}
    config = load_config(base={"name": "audit", "study": "audit", "seed": 0, "noise": "simulation", "model": {"name": "itemcf"},
                               "dataset": {"name": "synthetic", "options": SYNTHETIC}, "study_options": study_options})  # fmt: skip
    old = run_study(config)
    data, *_ = synthetic_split()
    model = fit_model(config, data, Results(name="x", study="audit", config={}))
    ids = data.full.user_ids
    new = Audit(Target.from_recommender(model), data.full, ids[np.unique(data.train.users)], ids[data.heldout_users],
                test=data.test, valid=data.valid, sections=study_options["sections"], options=OPTIONS,
                noise="simulation").run()  # fmt: skip
    np.testing.assert_equal(new.metrics, old.metrics)  # NaN (a TPR not resolvable) equals NaN
    np.testing.assert_equal(new.tables["risk_summary"].rows, old.tables["risk_summary"].rows)


def logged_exposures(seed: int = 0) -> pd.DataFrame:
    """60 users x 12 slates of 10 news items; each slate leans to the items of the user's topic."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(60):
        topic = rng.integers(0, 4)
        for slate in range(12):
            items = rng.choice(np.r_[np.arange(topic * 10, topic * 10 + 10), np.arange(40, 80)], 10, replace=False)
            clicked = rng.random(10) < np.where(items // 10 == topic, 0.4, 0.05)
            rows += [(f"u{user}", 100 + slate, f"n{i}", int(c)) for i, c in zip(items, clicked)]
    return pd.DataFrame(rows, columns=["user_id", "slate_id", "item_id", "clicked"])


def test_logged_exposures_give_the_same_numbers_from_python_and_the_command_line(tmp_path):
    """The exposure attack runs on what the target logged it showed, with no built-in model."""
    exposures = logged_exposures()
    clicks = exposures[exposures["clicked"] == 1][["user_id", "item_id"]].drop_duplicates()
    lists = pd.DataFrame({"user_id": clicks["user_id"].unique(), "rank": 1, "item_id": "n0"})
    options = {"exposure": {"dim": 16, "n_epochs": 2, "ratios": [0.5]}}
    direct = Audit(Target.from_lists(lists), clicks, clicks["user_id"].unique(), exposures=exposures, sections=["exposure"],
                   options=options, noise="simulation").run()  # fmt: skip
    logged = audit_files(tmp_path, {"interactions": clicks, "lists": lists, "exposures": exposures}, sections=["exposure"],
                         **options)  # fmt: skip
    assert "exposure/recall@10/all" in direct.metrics
    np.testing.assert_equal(logged.metrics, direct.metrics)
    text = next(s for s in logged.sections if s.title.startswith("Exposure")).text
    assert "logged impressions of exposures: the impressions rule" in text


def test_bad_logged_exposures_name_the_file_and_line(tmp_path):
    (tmp_path / "exposures.csv").write_text("user_id,slate_id,item_id,clicked\nu1,1,n1,maybe\n")
    (tmp_path / "interactions.csv").write_text("user_id,item_id\nu1,n1\n")
    (tmp_path / "lists.csv").write_text("user_id,rank,item_id\nu1,1,n1\n")
    result = CliRunner().invoke(app, ["audit", "--interactions", tmp_path / "interactions.csv", "--lists", tmp_path / "lists.csv",
                                      "--exposures", tmp_path / "exposures.csv", "--out", tmp_path / "runs"])  # fmt: skip
    assert result.exit_code == 2
    assert f"error: {tmp_path / 'exposures.csv'}:2: clicked 'maybe' is not a click flag; expected 0 or 1" in result.output
    assert not (tmp_path / "runs").exists()
