"""Record golden numbers BEFORE the refactor (run on commit 3438802)."""
import json, sys, math
import numpy as np, pandas as pd, torch
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dpsgd import DPSGDSRGNN
from recprivacy.defenses.edgerand import EdgeRand
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.models.srgnn import SRGNN
from recprivacy.defenses.federated_dp import make_baseline
from recprivacy.federated.features import user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator

def seqs():
    rng = np.random.default_rng(1)
    n_users, n_items, length = 12, 15, 8
    items = np.stack([rng.choice(n_items, size=length, replace=False) for _ in range(n_users)]).ravel()
    frame = pd.DataFrame({"gender": rng.choice(["F", "M"], size=n_users), "age": rng.choice([1, 18, 25], size=n_users)})
    return Interactions(np.repeat(np.arange(n_users), length), items, n_users, n_items,
                        timestamps=np.tile(np.arange(length), n_users), user_features=frame)

BASE = {"hidden": 8, "user_dim": 4, "n_epochs": 2, "batch_size": 16, "seed": 0, "noise": "simulation",
        "user_categorical": ["gender", "age"]}
out = {}
data = seqs()
for name, make in [
    ("dpsgd", lambda: DPSGDSRGNN(eps1=2.0, **BASE)),
    ("dpsgd_id", lambda: DPSGDSRGNN(**{**BASE, "user_mode": "id"})),
    ("dipsgnn", lambda: DIPSGNN(eps1=2.0, **BASE)),
    ("edgerand", lambda: EdgeRand(eps1=2.0, **BASE)),
    ("srgnn_count", lambda: SRGNN(adjacency="count", user_mode="id", **{k: v for k, v in BASE.items() if k != "user_categorical"})),
]:
    m = make().fit(data)
    s = m.score(np.arange(6))
    st = {k: v.epsilon for k, v in m.privacy_statement().items()} if hasattr(m, "privacy_statement") else {}
    out[name] = {"scores": s.double().flatten().tolist(), "losses": list(map(float, m.history_.losses)), "eps": st}

train = Interactions(np.repeat(np.arange(8), 6), np.concatenate([np.random.default_rng(0).choice(15, 6, replace=False) for _ in range(8)]), 8, 15,
                     ratings=np.random.default_rng(5).integers(1, 6, 48).astype(float),
                     user_features=pd.DataFrame({"gender": np.array(list("MFMFMFMM")), "age": np.array([20, 30, 40, 50, 25, 37, 61, 18])}))
feats = user_features(train)
for name in ("fgerai", "fgerai_nl", "fdpmf"):
    b = make_baseline(name, feats.blocks)
    model = make_federated_model(b.model or "fedrec", train.n_items, feats.dim, 4)
    sim = FederatedSimulator(model, train, feats.x, LocalTraining(lr=0.01, local_epochs=2, batch_size=4, n_negatives=1), 4,
                             seed=5, objective=b.objective, feature_privacy=b.features, init_std=0.1, noise="simulation")
    up = sim.run_round(); up2 = sim.run_round()
    out[name] = {"features": np.asarray(sim.features, np.float64).flatten().tolist(),
                 "uploads": {k: v.double().flatten().tolist() for k, v in up2.uploads.items()}}
json.dump(out, open(sys.argv[1], "w"))
print({k: len(v) for k, v in out.items()})
