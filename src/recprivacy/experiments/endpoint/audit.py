"""The audit of a live endpoint on a configured dataset, in a run folder opened first so that
the answers are kept as they arrive and a stopped audit can be resumed.

``audit_endpoint(config, spec, out)`` prepares the data as ``recprivacy audit --dataset``
does (split, held-out users with the config's seed: an endpoint trained by ``recprivacy serve``
on the same config has the same members) and runs the planned sections against the endpoint.
The run folder ``<out>/<time>-<name>/`` holds ``config.yaml`` and ``endpoint.yaml`` (the
endpoint, its templates and the name of the token's variable, never its value) from the start,
and ``private/`` (mode 0700) the cache of answers (:mod:`.cache`). When the budget is spent or
queries fail, the folder is kept without ``results.json`` and the message says how to resume;
``resume=RUN_DIR`` continues it with the saved config and endpoint, sending only the queries
whose answers are not in the cache. Before the sections run, a line says at most how many
queries they need (:func:`planned_queries`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from recprivacy.config import Config, validate_options
from recprivacy.errors import DataError
from recprivacy.experiments.audit.own import describe_own_target
from recprivacy.experiments.audit.plan import AuditOptions, plan_sections
from recprivacy.experiments.audit.registry import AuditSection, available_inputs, member_users
from recprivacy.experiments.audit.study import audit_prepared, prepare_audit_data
from recprivacy.experiments.endpoint.cache import CACHE_FILE
from recprivacy.experiments.endpoint.client import EndpointError
from recprivacy.experiments.endpoint.spec import EndpointSpec, Politeness
from recprivacy.experiments.results import Results
from recprivacy.experiments.run_folder import finish_run, open_run, resume_run
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.io import check_output_folder, write_text_atomic
from recprivacy.progress import stage

ENDPOINT_FILE = "endpoint.yaml"


def audit_endpoint(config: Config, spec: EndpointSpec, out_root: str | Path) -> tuple[Results, Path]:
    """Audit ``spec``'s endpoint in a new run folder under ``out_root`` (module docstring)."""
    check_output_folder(out_root, option="--out")
    results = new_results(config)
    folder = open_run(config, out_root, results)
    write_text_atomic(folder / ENDPOINT_FILE, yaml.safe_dump(spec.to_dict(), sort_keys=False))
    return _run(config, spec, folder, results, fresh=True)


def resume_endpoint(run_dir: str | Path, politeness: Politeness | None = None) -> tuple[Results, Path]:
    """Continue an endpoint audit stopped in ``run_dir`` with its saved config and endpoint;
    ``politeness`` (rate, retries, budget: they change no number) replaces the saved one when given."""
    from recprivacy.config import load_config

    folder, _ = resume_run(run_dir, None)
    saved = folder / ENDPOINT_FILE
    if not saved.is_file():
        raise DataError(f"--resume: not the run folder of an endpoint audit (no {ENDPOINT_FILE})", folder)
    spec = EndpointSpec.from_dict(yaml.safe_load(saved.read_text(encoding="utf-8")))
    if politeness is not None:
        spec = EndpointSpec(**{**spec.__dict__, "politeness": politeness})
    config = load_config(folder / "config.yaml")
    return _run(config, spec, folder, new_results(config))


def _run(config: Config, spec: EndpointSpec, folder: Path, results: Results, fresh: bool = False) -> tuple[Results, Path]:
    """Run the audit into ``folder``; on failure keep it and say how to resume (a ``fresh``
    folder that received no answer is removed)."""
    target = Target.from_endpoint(spec, cache=folder / CACHE_FILE)
    stage(f"audit of {spec.shown} in {folder}")
    try:
        results = configured_audit(config, target, results)
    except BaseException as err:
        target.endpoint.cache.close()
        if fresh and not (folder / CACHE_FILE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            raise
        resume = f"answers kept in {folder / CACHE_FILE}; resume with: recprivacy audit --resume {folder}"
        if isinstance(err, EndpointError):
            err.args = (f"{err}; {target.endpoint.stats.sent} requests sent by this run, {resume}",)
        else:
            stage(f"unfinished run: {resume}")
        raise
    target.endpoint.cache.close()
    stage(f"write the report into {folder}")
    return results, finish_run(results, folder)


def configured_audit(config: Config, target: Target, results: Results) -> Results:
    """The audit of any ``target`` on the configured data, prepared as the built-in audit
    prepares them; for an endpoint, a line first says at most how many queries the planned
    sections need, and the report's "Data and target" section says how it was queried."""
    options = validate_options(AuditOptions, config.study_options)
    plan = plan_sections(options)
    data = prepare_audit_data(config, options, plan, results)
    results.config["target"] = {"kind": target.kind, "description": target.description}
    if target.endpoint is not None:
        _announce(planned_queries(plan, data, target, config), target, results)
    audit_prepared(config, data, plan, lambda: target, results, lambda t: describe_own_target(t, data, results))
    if target.endpoint is not None:
        results.metrics.update({f"endpoint/{key}": value for key, value in target.endpoint.stats.as_dict().items()})
    return results


def _announce(needed: dict[str, int], target: Target, results: Results) -> None:
    """Say (stderr) and record how many queries the planned sections need at most."""
    client = target.endpoint
    budget = client.spec.politeness.budget
    per_section = ", ".join(f"{name} {n}" for name, n in needed.items()) or "none"
    cached = len(client.cache.answers) if client.cache is not None else 0
    stage(f"the planned sections need at most {sum(needed.values())} queries to {client.spec.shown} ({per_section}); "
          f"{cached} answers already cached; budget {budget if budget else 'none'}")  # fmt: skip
    results.metrics.update({f"endpoint/planned_queries/{name}": n for name, n in needed.items()})


# ---------------------------------------------------------------------------- the query plan

Estimate = Callable[[Any, PreparedData, Target, Config], int]


def _utility(o: Any, data: PreparedData, target: Target, config: Config) -> int:
    """Test users by id, at the report's longest cut-off and at the section's ``k``."""
    return len(np.unique(data.test.users)) * len({max(config.eval.ks), getattr(o, "k", max(config.eval.ks))})


def _membership(o: Any, data: PreparedData, target: Target, config: Config) -> int:
    """Per seed: non-members by history and as many members by id; the mimicry of the
    shadow's algorithm serves every eligible held-out user once."""
    eligible = int((data.full.user_counts()[data.heldout_users] >= o.min_interactions).sum())
    group = max(eligible // 2, 2) if o.max_users is None else min(max(eligible // 2, 2), o.max_users)
    mimicry = eligible if o.shadow_algorithm is None and not target.can_retrain else 0
    return o.seeds * 2 * group + mimicry


def _attribute(o: Any, data: PreparedData, target: Target, config: Config) -> int:
    """Members by id and (when served) held-out users by history, at most ``max_users``."""
    users = len(member_users(data)) + (len(data.heldout_users) if target.serves_unseen else 0)
    return users if o.max_users is None else min(users, o.max_users)


#: how many queries a section that serves lists sends at most; the other sections send none
ESTIMATES: dict[str, Estimate] = {"utility": _utility, "membership": _membership, "attribute": _attribute}


def planned_queries(plan: list[tuple[AuditSection, Any]], data: PreparedData, target: Target,
                    config: Config) -> dict[str, int]:  # fmt: skip
    """At most how many queries each planned section that will run sends to the endpoint."""
    have = available_inputs(data, target)
    return {section.name: ESTIMATES[section.name](o, data, target, config)
            for section, o in plan if section.name in ESTIMATES and not section.missing(have, o)}  # fmt: skip
