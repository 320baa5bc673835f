"""The attack x defence matrix on tiny synthetic data (issue 32): every defence row has a
utility cost and a privacy statement, cells that do not apply say why, DP rows (the sequential
SR-GNN defences too) carry claimed against measured epsilon, the UPC-SDG row is attacked in every
column (recovery of its release included) and DPMF and UPC-SDG rows get an adaptive membership
attacker, and the CSV and figures are written. The matrix is the session's shared reduced run
(``synthetic_matrix`` in ``conftest.py``, by ``recprivacy matrix``), which test_matrix_resume.py and
test_report_layout.py read too."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from recprivacy import Matrix
from recprivacy.config import load_config
from recprivacy.experiments import load_results
from recprivacy.experiments.matrix.plan import ATTACKS
from recprivacy.experiments.membership.compare import ATTACK_NAMES
from recprivacy.metrics.verdict import ATTACK_WORDS, DEFENCE_WORDS, RULE
from rejudge import check_matrix
from shared_matrix import MATRIX_CONFIG

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(synthetic_matrix):
    return load_results(synthetic_matrix)


def test_matrix_runs_the_config_the_command_runs(matrix_run, monkeypatch):
    """``Matrix(dataset, target, noise=..., **options).run()`` runs the study on the config that
    ``recprivacy matrix --config`` read for the shared run, but for the name."""
    import recprivacy.experiments.matrix as matrix

    command = load_config(matrix_run(MATRIX_CONFIG)[0]).to_dict()  # the shared run is made before the patch
    ran = []
    monkeypatch.setattr(matrix, "run_study", ran.append)
    Matrix("synthetic", "bpr", noise=MATRIX_CONFIG["noise"], **MATRIX_CONFIG["study_options"]).run()
    (config,) = ran
    assert config.name == "matrix-synthetic-bpr" and config.to_dict() == {**command, "name": config.name}


def test_every_row_has_a_utility_cost_a_statement_and_a_reason_for_empty_cells(results):
    rows = results.tables["matrix"].rows
    assert [r[0] for r in rows][:3] == ["no defence", "popularity randomization (α = 0.1)",
                                        "exposure perturbation (random/uniform, L = 0.5)"]  # fmt: skip
    for row in rows:
        assert "change" in row[-2] and row[-1]
        for cell in row[1 : 1 + len(ATTACKS)]:
            assert cell.startswith("does not apply: ") or cell == "—" or "[" in cell
    # a cell empty only because the defence protects another channel reads "—"; the table's one note says which
    # channel each such defence protects, the long table says why
    pop = rows[1][1 + [a.key for a in ATTACKS].index("exposure")]
    assert pop == "—"
    assert "popularity randomization (α = 0.1) protects lists" in results.tables["matrix"].caption
    long = {(r[0], r[1]): r[-1] for r in results.tables["matrix-cells"].rows}
    assert long["popularity_randomization", "exposure"].startswith("does not apply: popularity randomization")
    assert any("frozen" in c and "adaptive" in c for r in rows for c in r[1:4])


def test_dp_rows_carry_claimed_and_measured_epsilon(results):
    target, dpmf = results.tables["matrix-epsilon"].rows[:2]
    assert target[1] is None and target[-1].startswith("no formal claim")
    assert dpmf[1] == 1.0 and dpmf[3].startswith("objective perturbation") and dpmf[4]
    assert dpmf[6] >= 0 and dpmf[7] >= 0 and dpmf[-1].split(":")[0] in ("consistent", "BROKEN GUARANTEE")
    uploads = results.tables["matrix-epsilon-uploads"].rows
    assert [r[0] for r in uploads] == ["apm", "ldp", "gaussian", "fixrec_max", "fixrec_min", "fgerai (feature LDP)",
                                       "fgerai (functional mechanism)", "fdpmf (objective perturbation)"]
    *uploads, feature_ldp, functional, fdpmf = uploads
    # k-RR at eps_x = 1 and the functional mechanism's eps_f = 1 per label: testable, and consistent
    for row in (feature_ldp, functional):
        assert row[1] == 1.0 and 0 < row[5] <= 1.0 and row[-1].startswith("consistent")
    # per-scalar claims of 30 and more (F-DPMF's 40 per label) cannot be tested with a few thousand
    # uploads: said so, not passed
    assert all(r[1] >= 30 and r[-1].startswith("untestable at this sample size") for r in [*uploads, fdpmf])


def test_dpsgd_rows_claim_user_level_privacy_and_the_canary_audit_stays_below_it(results):
    rows = results.tables["matrix-epsilon"].rows[2:4]
    assert [r[0] for r in rows] == ["DP-SGD BPR-MF (ε = 1)", "DP-SGD BPR-MF (ε = 8)"]
    for (name, claimed, delta, accountant, unit, *_, reading), target in zip(rows, (1.0, 8.0)):
        assert target - 0.05 < claimed <= target and delta == 1e-4 and "Poisson sampling of users" in accountant
        assert unit.startswith("one user") and reading.startswith("consistent"), reading
    utility = {r[0]: r for r in results.tables["matrix"].rows}
    assert "change" in utility["DP-SGD BPR-MF (ε = 1)"][-2]


def test_sequential_defences_carry_a_claim_a_measured_bound_and_a_verdict(results):
    rows = results.tables["matrix-epsilon"].rows[4:]
    assert [r[0] for r in rows] == ["DIPSGNN (SR-GNN)", "DP-SGD (SR-GNN)", "EdgeRand (SR-GNN)"]
    for name, claimed, delta, accountant, unit, scope, roc, one_run, guesses, reading in rows:
        assert claimed > 0 and 0 < delta < 1 and accountant and unit and "whole training run" in scope
        assert roc >= 0 and one_run >= 0 and guesses.endswith(" of 40")
        assert reading.split(":")[0] in ("consistent", "BROKEN GUARANTEE", "untestable at this sample size"), reading
        assert ("outside the edge-level unit" in reading) == (name != "DP-SGD (SR-GNN)")
    assert "training sample" in rows[1][4] and "edge" in rows[0][4]
    utility = results.tables["matrix-sequential-utility"].rows  # every sequential defence has a utility cost
    assert [r[0] for r in utility] == ["DIPSGNN (SR-GNN)", "DP-SGD (SR-GNN)", "EdgeRand (SR-GNN)"]
    for _, value, low, high, base, change, c_low, c_high in utility:
        assert 0 <= low <= value <= high <= 1 and 0 <= base <= 1 and c_low <= change <= c_high
        assert change == pytest.approx(value - base)


def _cells(results, defence: str, attack: str) -> dict[str, list]:
    """The long table's rows of one cell, by attacker ('' for a cell without one)."""
    columns = results.tables["matrix-cells"].columns
    return {r[2]: dict(zip(columns, r)) for r in results.tables["matrix-cells"].rows if r[:2] == [defence, attack]}


def test_the_upcsdg_row_is_attacked_in_every_column_and_has_a_utility_cost_and_statement(results):
    row = next(r for r in results.tables["matrix"].rows if r[0] == "UPC-SDG (k = 0.2, γ = 0.5)")
    cells = dict(zip([a.key for a in ATTACKS], row[1 : 1 + len(ATTACKS)]))
    assert cells.pop("uploads") == "—", row  # a release is not a federated upload
    assert "UPC-SDG (k = 0.2, γ = 0.5) protects released data" in results.tables["matrix"].caption
    assert all("[" in cell for cell in cells.values()), row
    # the canary and interaction attackers have no trained part; every other column shows both attackers
    assert all("frozen" in c and "adaptive" in c for key, c in cells.items() if key not in ("canaries", "interactions")), row
    assert row[-2].startswith("Recall@10 (members' test): ") and "change" in row[-2]
    assert row[-1] == "No formal differential-privacy guarantee"
    # no formal claim: no row in the claimed-vs-measured table, though its canary cell measures it
    assert all(not r[0].startswith("UPC-SDG") for r in results.tables["matrix-epsilon"].rows)


def test_the_recovery_column_has_a_verdict_against_the_popularity_guess_and_says_why_elsewhere(results):
    for attacker, cell in _cells(results, "upcsdg_g0.5", "recovery").items():
        assert attacker in ("frozen", "adaptive") and cell["metric"] == "Recall@K"
        assert cell["baseline name"] == "popularity guess of the release, 10 items" and 0 <= cell["baseline"] <= 1
        assert cell["low"] <= cell["value"] <= cell["high"] and cell["verdict"]
        assert abs(cell["margin"] - (cell["value"] - cell["baseline"])) < 1e-9
    none = _cells(results, "none", "recovery")[""]
    assert none["reason"].startswith("does not apply: without a defence the raw data is released; nothing is replaced")
    assert _cells(results, "dpmf_eps1", "recovery")[""]["reason"].endswith("the attack observes released data")


def test_dpmf_and_upcsdg_membership_cells_have_an_adaptive_attacker(results):
    for defence in ("dpmf_eps1", "upcsdg_g0.5"):
        cells = _cells(results, defence, "membership")
        assert set(cells) == {"frozen", "adaptive"}, cells
        # the audit's strongest attack against the strongest baseline: a blind guess or a history statistic
        assert all(0 <= c["value"] <= 1 and c["baseline"] >= 0.5 for c in cells.values())
        # the long table names the strongest of the attacks each attacker ran
        assert all(c["strongest attack"] in ATTACK_NAMES.values() for c in cells.values()), cells


def test_the_matrix_writes_its_figures_and_csv(results, synthetic_matrix):
    assert set(results.figures) == {"matrix", "matrix-frontier"}  # the heat map and one privacy-utility frontier
    assert (synthetic_matrix / "tables" / "matrix-cells.csv").is_file()
    assert all((synthetic_matrix / figure.path).stat().st_size > 0 for figure in results.figures.values())


def test_upload_defences_get_rows_of_their_own_federated_system_and_only_the_uploads_column(results):
    table = results.tables["matrix"]
    column = next(i for i, c in enumerate(table.columns) if c.startswith("attribute inference from federated uploads"))
    assert "weighted F1; observes uploads" in table.columns[column]
    rows = {r[0]: r for r in table.rows}
    pure = rows["no defence"][column]
    assert pure.startswith("0.") and " frozen, " in pure and "adaptive" not in pure  # Pure FedRec: frozen = adaptive
    central = ["popularity randomization (α = 0.1)", "exposure perturbation (random/uniform, L = 0.5)", "DPMF (ε = 1)"]
    assert all(rows[name][column] == "—" for name in central)
    apm, fdpmf = rows["APM (adaptive per-component LDP on uploads)"], rows["F-DPMF (objective perturbation, federated MF)"]
    for row in (apm, fdpmf):
        cells = row[1 : 1 + len(ATTACKS)]
        assert [c == "—" for c in cells] == [i + 1 != column for i in range(len(ATTACKS))]
        assert row[column].split("; ")[0].split(", ")[-1] in ATTACK_WORDS, row[column]
        # the defence verdict is stated after the undefended value it is measured against
        assert re.search(rf"; change [+-]0\.\d{{3}} \[.*\] vs {pure[:5]} undefended: ({'|'.join(DEFENCE_WORDS)})(;|$)",
                         row[column]), row[column]
        assert row[-2].startswith("Recall@10 (federated, sampled users' test)") and "change" in row[-2]
        assert "local differential privacy" in row[-1] and row[-1].startswith("ε = "), row[-1]
    fgerai = rows["F-GERAI (functional mechanism and feature LDP)"]
    for row in (apm, fgerai):  # both attackers shown
        assert set(re.findall(r"\b(frozen|adaptive)\b", row[column])) == {"frozen", "adaptive"}, row[column]
    assert "frozen not run: F-DPMF trains a model whose uploads differ in shape" in fdpmf[column]
    assert fgerai[-1] and fgerai[-2].startswith("Recall@10 (federated, sampled users' test)")
    long = [r for r in results.tables["matrix-cells"].rows if r[1] == "uploads" and r[2]]
    assert sorted((r[0], r[2]) for r in long) == [("none", "adaptive"), ("none", "frozen"), ("uploads_apm", "adaptive"),
                                                  ("uploads_apm", "frozen"), ("uploads_fdpmf", "adaptive"),
                                                  ("uploads_fgerai", "adaptive"), ("uploads_fgerai", "frozen")]
    columns = results.tables["matrix-cells"].columns
    long = [dict(zip(columns, r)) for r in long]
    assert all(r["metric"] == "weighted F1" and r["baseline name"] == "better of majority-class and uniform guess" for r in long)
    statements = {r[0]: r[1] for r in results.tables["matrix-statements"].rows}
    assert "local differential privacy" in statements["APM (adaptive per-component LDP on uploads)"]


def test_every_defence_change_is_the_difference_of_the_two_printed_values_and_every_cell_is_recorded(results):
    table = results.tables["matrix"]
    undefended = dict(zip(table.columns, table.rows[0]))
    changes = 0
    for row in table.rows[1:]:
        for column, text in zip(table.columns[1 : 1 + len(ATTACKS)], row[1 : 1 + len(ATTACKS)]):
            if (match := re.match(r"^(\d\.\d{3}) \[.*?\] \w+, [a-z ]+; change ([+-]\d\.\d{3}) \[.*?\] vs (\d\.\d{3}) undefended", text)):
                value, change, base = (Decimal(x) for x in match.groups())
                assert change == value - base and undefended[column].startswith(str(base)), (text, undefended[column])
                changes += 1
    assert changes >= 10
    section = next(x for x in results.sections if x.title == "Attack x defence matrix")
    assert section.text.count(RULE) == 1
    attribute = next(c for c in table.columns if c.startswith("attribute inference from top-k lists"))
    assert "(balanced accuracy; observes lists)" in attribute
    records = [v for v in results.verdicts if v["section"] == "matrix"]
    assert len(records) == sum(1 for r in results.tables["matrix-cells"].rows if r[2])
    for v in records:
        assert v["label"] in ATTACK_WORDS and v["sample"]["positives"] > 0
        assert v["margin"]["value"] == pytest.approx(v["value"]["value"] - v["baseline"])
        if "change" in v:
            assert v["change"]["value"] == pytest.approx(v["defended"] - v["undefended"]) and v["change_label"] in DEFENCE_WORDS
    membership = [v for v in records if v["attack"] in ("membership", "canaries")]
    assert membership and all(v["chance"] == 0.5 and v["sample"]["negatives"] > 0 for v in membership)
    assert all(v["chance"] == v["baseline"] for v in records if v["metric"] == "balanced accuracy")


def test_every_matrix_verdict_is_rederived_by_hand_from_its_record(results):
    """The independent re-judging of ``rejudge.py`` (apart from ``metrics.verdict``) gives every
    attacker's word, and every defence's change is its two printed values' difference."""
    words = check_matrix({"verdicts": results.verdicts})
    assert len(words) == len(results.verdicts) > 0
    assert any(r.get("change") for r in results.verdicts)
    # every central column is among the re-judged, the interactions column's easy non-members too
    judged = {(r["attack"], r["attacker"]) for r in results.verdicts}
    assert {("interactions", "frozen"), ("interactions", "easy non-members"), ("recovery", "adaptive")} <= judged
    assert any(r["attack"] == "interactions" and r.get("change") for r in results.verdicts)


def test_the_report_opens_with_the_heat_map(results):
    first = results.sections[0]
    assert first.title == "At a glance" and first.figures == ["matrix"]


def test_the_terminal_prints_one_answer_line_per_attack_within_the_width(matrix_run, results):
    """Piped at COLUMNS=100, ``recprivacy matrix`` prints the answer (one line per measured attack:
    its verdict, the defence that reduces it most, those that backfire), not the wide matrix table."""
    config_path, _ = matrix_run(MATRIX_CONFIG)
    printed = (config_path.parent / "terminal.txt").read_text().splitlines()
    answer = results.tables["answer"].rows
    assert len(answer) >= 5 and [row[0] for row in answer] == list(dict.fromkeys(row[0] for row in answer))
    lines = printed[: len(answer)]
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)  # the paths after them are not cut
    assert [line.split("  ")[0] for line in lines] == [row[0] for row in answer]
    assert [line.split()[1 + row[0].count(" ")] for line, row in zip(lines, answer)] == [row[1].split()[0] for row in answer]
    assert printed[len(answer)].startswith("Run written to")


def test_the_matrix_stores_one_record_per_cell(synthetic_matrix):
    """The kit's record store: the central rows and six central columns (interactions last), Pure FedRec and
    the three upload defences, sequential, mechanisms; each attacker's value is a measurement."""
    stored = [json.loads(line) for line in (synthetic_matrix / "records.jsonl").read_text().splitlines()]
    assert len(stored) == 13
    assert [r["cell"] for r in stored[:2]] == [{"part": "rows"}, {"part": "column", "attack": "membership"}]
    membership = {(m["setting"]["defence"], m["setting"]["attacker"]) for m in stored[1]["measurements"] if m["unit"] != "s"}
    assert {("none", "frozen"), ("dpmf_eps1", "adaptive")} <= membership
