"""Every paper number still written as a Python literal equals its cell in reference.yaml."""

from recprivacy.experiments import dipsgnn, exposure, federated, upcsdg
from recprivacy.experiments.membership import paper as mp
from recprivacy.experiments.reference import reference


def pairs():
    """(literal, yaml) for every literal number."""
    r0, r1, r2, r3, r4 = (reference(p) for p in ("000", "001", "002", "003", "004"))
    tables = {"point": "Table 3", "lstm": "Table 4", "gru": "Table 5", "transformer": "Table 6"}
    for (ds, e, d), vals in exposure.PAPER_TABLES.items():
        yield from ((v, r0.value(tables[d], f"{ds}/{e}", m)) for m, v in zip(exposure.METRIC_COLUMNS, vals))
    a2 = {"ADM": "Table 3", "lf-2k": "Table 4", "ml-1m": "Table 5"}
    for ds, vals in mp.ASSUMPTION_2.items():
        yield from ((v, r1.value(a2[ds], k[0], k[1])) for k, v in vals.items())
    for (ds, role), vals in mp.HIT_RATE.items():
        yield from ((v, r1.value("Table 2", f"{ds}/{role}", a)) for a, v in vals.items())
    for ds, vals in mp.KMEANS.items():
        yield from ((v, r1.value({"lf-2k": "Table 6", "ml-1m": "Table 7"}[ds], "K-Means", a)) for a, v in vals.items())
    yield from ((v, r1.value("Figure 6", f"{a}/{b}", f"{c}/{d}")) for (a, b, c, d), v in mp.ASSUMPTION_3.items())
    yield from ((v, r1.value("Figure 9", f"k={k}", f"l={n}")) for (k, n), v in mp.MIMI.items())
    yield from ((v, r1.value("Section 3.4", "lf-2k/L", f"shadow_fraction={f}")) for f, v in mp.SHADOW_SIZE.items())
    yield from ((v, r1.value("Figure 12", f"{d}/{a}", "alpha=0.1")) for (d, a), v in mp.DEFENSE_AFTER.items())
    for col, rows in dipsgnn.PAPER_TABLE2.items():
        for method, vals in rows.items():
            yield from ((v, r2.value("Table 2", method, f"{col}/{m}")) for m, v in zip(dipsgnn.PAPER_METRICS, vals))
    for ds, by in upcsdg.PAPER_TABLE2.items():
        for setting, models in by.items():
            for model, vals in models.items():
                yield from ((v, r3.value("Table 2", f"{ds}/{setting}/{model}", m)) for m, v in zip(upcsdg.METRICS, vals))
    for variant, by_k in upcsdg.PAPER_TABLE3.items():
        for k, vals in by_k.items():
            yield from ((v, r3.value("Table 3", f"{variant}/k={k}", m)) for m, v in zip(upcsdg.METRICS, vals))
    for (ds, method, attr, z), v in federated.PAPER_F1.items():
        yield v, r4.value("Table II", f"{ds}/{attr}/{method}", f"zeta={z}") if z < 0.3 else r4.value("Table V", f"{attr}/zeta={z}", "dnn")
    for (ds, method, attr), by in federated.PAPER_BY_ATTACKER.items():
        yield from ((v, r4.value("Table IV", f"{ds}/{attr}/{method}", a)) for a, v in by.items())
    for (ds, model, m), v in federated.PAPER_HIT20.items():
        yield v, r4.value("Table III", f"{ds}/{m}", "hit@20") if model == "fedrec" else r4.value("Table VI", f"{ds}/{model}/{m}", "hit@20")
    yield from ((v, r4.value("Table VI", f"{d}/{mo}/{me}", a)) for (d, mo, me, a), v in federated.PAPER_TABLE6.items())
    for (attr, z), by in federated.PAPER_TABLE5.items():
        yield from ((v, r4.value("Table V", f"{attr}/zeta={z}", a)) for a, v in by.items())


def test_every_literal_equals_its_yaml_cell():
    checked = list(pairs())
    assert len(checked) == 216 + 67 + 124 + 138 + 58 + 112 + 18 + 24 + 16
    assert [(lit, cell) for lit, cell in checked if lit != cell] == []
