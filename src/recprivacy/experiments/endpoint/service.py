"""The reference service: a fitted recprivacy model behind the endpoint contract the audit
speaks by default (``recprivacy serve RUN``), for tests, demos and as an example of the contract.

Two routes, JSON in and out, original ids throughout:

* ``GET /users/{user}/recommendations?k=10`` -> ``{"user": ..., "items": [...]}``: a user the
  model was trained on, their training items excluded; any other user is ``404``;
* ``POST /recommendations`` with ``{"history": [item, ...], "k": 10}`` -> ``{"items": [...]}``:
  a user it was not trained on, served from the history (oldest first; the history's items
  excluded); an item id not in the catalogue is ``422``.

``k`` must lie in ``[1, n_items]`` (else ``422``). The model behind a run folder is trained
again from the run's ``config.yaml`` (:func:`fit_run_model`): the same config and seed give the
same model on the same machine, so ``recprivacy serve`` of an audit run serves the target that
audit examined, trained on the same members. FastAPI and uvicorn come with the ``serve`` extra.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel

from recprivacy.config import Config, load_config, validate_options
from recprivacy.data.interactions import Interactions
from recprivacy.errors import DataError, RecPrivacyError
from recprivacy.models.base import Recommender


def _framework() -> tuple[Any, Any]:
    """``(fastapi, uvicorn)``, or a one-line error naming the extra that installs them."""
    try:
        import fastapi
        import uvicorn
    except ImportError:
        raise RecPrivacyError("recprivacy serve needs fastapi and uvicorn; install the 'serve' extra: "
                              "pip install 'recprivacy[serve]'") from None  # fmt: skip
    return fastapi, uvicorn


class ServedModel:
    """``model`` (fitted on ``data``'s id spaces) answering by original ids (module docstring)."""

    def __init__(self, model: Recommender, data: Interactions) -> None:
        self.model, self.data = model, data
        self.users = pd.Index(data.user_ids)
        self.items = pd.Index(data.item_ids)
        self.members = np.asarray(model.train_csr_.getnnz(axis=1) > 0)

    def by_user(self, user: str, k: int) -> list[Any] | None:
        """Top-``k`` original item ids of a member (None: not a member)."""
        key = _typed(user, self.data.user_ids)
        position = self.users.get_indexer([key])[0] if key is not None else -1
        if position < 0 or not self.members[position]:
            return None
        return self.data.item_ids[self.model.recommend(np.array([position]), k).numpy()[0]].tolist()

    def by_history(self, history: list[Any], k: int) -> list[Any]:
        """Top-``k`` original item ids for a new user's history (``DataError`` naming an unknown item)."""
        found = self.items.get_indexer(history)
        if (found < 0).any():
            raise DataError(f"item id {history[int(np.argmin(found))]!r} is not in the catalogue", "history")
        one = Interactions(np.zeros(len(found), dtype=np.int64), found.astype(np.int64), 1, self.data.n_items,
                           user_ids=np.array(["new"], dtype=object), item_ids=self.data.item_ids)  # fmt: skip
        return self.data.item_ids[self.model.recommend_histories(one, k).numpy()[0]].tolist()


def _typed(text: str, ids: np.ndarray) -> Any:
    """``text`` as an id of the type of ``ids`` (None when it cannot be one)."""
    if np.issubdtype(ids.dtype, np.integer):
        return int(text) if text.lstrip("-").isdigit() else None
    return text


class History(BaseModel):
    """The body of a request by history."""

    history: list[int | str]
    k: int = 10


def create_app(model: Recommender, data: Interactions) -> Any:
    """The FastAPI application serving ``model`` (module docstring)."""
    fastapi, _ = _framework()
    served = ServedModel(model, data)
    app = fastapi.FastAPI(title="recprivacy reference recommender", docs_url=None, redoc_url=None)
    n_items = data.n_items

    def check_k(k: int) -> None:
        if not 1 <= k <= n_items:
            raise fastapi.HTTPException(422, f"k={k}: expected 1 <= k <= {n_items}")

    @app.get("/users/{user}/recommendations")
    def recommend_user(user: str, k: int = 10) -> dict[str, Any]:
        check_k(k)
        items = served.by_user(user, k)
        if items is None:
            raise fastapi.HTTPException(404, f"user {user!r} is not a user this model was trained on")
        return {"user": user, "items": items}

    @app.post("/recommendations")
    def recommend_history(body: History) -> dict[str, Any]:
        check_k(body.k)
        try:
            return {"items": served.by_history(body.history, body.k)}
        except DataError as err:
            raise fastapi.HTTPException(422, str(err)) from None

    return app


def fit_run_model(run_dir: str | Path) -> tuple[Recommender, Interactions]:
    """The model a ``train`` or built-in ``audit`` run trained, trained again from its
    ``config.yaml`` (same data preparation, held-out users and seed), and the data's id spaces."""
    from recprivacy.experiments.audit.plan import AuditOptions, plan_sections
    from recprivacy.experiments.audit.study import prepare_audit_data
    from recprivacy.experiments.runner import new_results
    from recprivacy.experiments.train import fit_model, prepare_data
    from recprivacy.models.training import use_threads

    config = run_config(run_dir)
    results = new_results(config)
    if config.study == "audit":
        options = validate_options(AuditOptions, config.study_options)
        data = prepare_audit_data(config, options, plan_sections(options), results)
    else:
        data = prepare_data(config, results)
    with use_threads(config.threads):
        return fit_model(config, data, results), data.full


def run_config(run_dir: str | Path) -> Config:
    """The config of a ``train`` or built-in ``audit`` run folder (``DataError`` otherwise)."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise DataError("not a run folder (no config.yaml); expected the folder of a `recprivacy train` or "
                        "`recprivacy audit` run", run_dir)  # fmt: skip
    saved = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if saved.get("study") not in ("train", "audit") or "target" in saved:
        raise DataError(f"a {saved.get('study')!r} run{' of your own target' if 'target' in saved else ''}; expected a `recprivacy train` run or an audit of a "
                        "built-in model (--dataset/--model)", run_dir)  # fmt: skip
    return load_config(path)


def free_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: a free port the system picks)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def server(app: Any, log_level: str = "warning") -> Any:
    """A uvicorn server of ``app`` (run it with ``server.run(sockets=[free_socket()])``)."""
    _, uvicorn = _framework()
    return uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False, ws="none", lifespan="off"))
