"""The ClientApp: one user's device (Flower Message API).

``query`` answers the server's one question, which user this device is (and the tag of the
federation its file was written for, ``device.federation_tag``). ``train`` is one
round of Algorithm 1 on the device: the global model arrives (``arrays``) with the round
number (``config``); the device trains it on its own data with ``protocol.local_update`` (a
batch of one), randomises it with the method's upload defence (``protocol.perturb_uploads``)
and replies with all shared parameters and its user id. Everything that protects the user
happens here, on the device, with the device's own noise stream (``protocol.client_noise``):
the upload defences (APM, uniform LDP, Gaussian, FixRec), F-GERAI's one-off randomisation of
``x_u`` and the perturbed objectives of F-GERAI / F-DPMF. What stays on the device between
rounds (its randomised features, federated MF's private ``p_u``) lives in ``context.state``,
which Flower never sends anywhere.

``app`` is the deployment's ClientApp: its SuperNode's node config ``data`` names the device
file (``device.Device``). ``client_app`` builds one around any way of finding a device's data
(the simulation engine's virtual nodes use ``partition-id``) and the spec (Flower's
``run_simulation`` takes no run config, so the simulation engine hands it over directly).

A SuperNode starts a ClientApp process for every message it receives, so this module imports
only Flower and the device file at the top: torch, the protocol and the spec (most of their
import cost is torch; no pandas, SciPy statistics or centralised models, which
``tests/unit/test_device_imports.py`` checks; the cost is in BENCHMARKS.md, "A federated
device's imports") are imported by ``train`` when a device trains,
and answering the server's question costs a process start and Flower alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from recprivacy.federated.flower_app.device import Device

if TYPE_CHECKING:  # imported where a device trains (module docstring)
    import torch

    from recprivacy.federated.flower_app.spec import AppSpec
    from recprivacy.privacy.randomness import NoiseSource

DeviceOf = Callable[[Context], Device]
SpecOf = Callable[[Context], "AppSpec"]


def spec_in_run_config(context: Context) -> AppSpec:
    """The run's ``AppSpec`` from the run config key ``spec`` (how a deployment passes it)."""
    from recprivacy.federated.flower_app.spec import AppSpec

    return AppSpec.from_json(str(context.run_config["spec"]))


def client_app(device_of: DeviceOf, spec_of: SpecOf = spec_in_run_config) -> ClientApp:
    """A ClientApp whose device data come from ``device_of(context)`` and the run's spec from
    ``spec_of(context)`` (module docstring)."""
    app = ClientApp()

    @app.query()
    def query(msg: Message, context: Context) -> Message:
        device = device_of(context)
        content = {"metrics": MetricRecord({"user": device.user}), "config": ConfigRecord({"federation": device.federation})}
        return Message(RecordDict(content), reply_to=msg)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        from recprivacy.federated.protocol import local_update, perturb_uploads
        from recprivacy.privacy.randomness import NoiseSource

        spec = spec_of(context)
        device = device_of(context)
        round_ = int(msg.content["config"]["round"])
        model, baseline = spec.federated_model(), spec.baseline()
        noise = NoiseSource(spec.noise, spec.seed)
        x, private = _local_state(context, spec, device, noise)
        batch = device.batch(spec.n_items, x)
        global_params = {k: v.float() for k, v in msg.content["arrays"].to_torch_state_dict().items()}
        trained = local_update(model, global_params, batch, spec.training(), spec.seed, round_, private,
                               baseline and baseline.objective, noise)
        if private:
            context.state["private"] = ArrayRecord({k: trained[k] for k in private})
        upload = perturb_uploads(trained, model, spec.defence(), batch.users, noise, round_)
        content = {"arrays": ArrayRecord({k: v[0] for k, v in upload.items()}), "metrics": MetricRecord({"user": device.user})}
        return Message(RecordDict(content), reply_to=msg)

    return app


def _local_state(context: Context, spec: AppSpec, device: Device, noise: NoiseSource) -> tuple[np.ndarray, dict[str, torch.Tensor]]:
    """The device's features as it holds them (randomised once, on the first round it takes
    part in, by F-GERAI) and its private parameters ``[1, ...]``, kept in ``context.state``."""
    import torch

    from recprivacy.federated.protocol import client_features, initial_state

    if "features" not in context.state:
        model, baseline = spec.federated_model(), spec.baseline()
        users = np.array([device.user])
        x = client_features(device.x[None], users, noise, baseline and baseline.features) if model.uses_features else device.x[None]
        _, private = initial_state(model, spec.n_users, spec.seed, spec.init_std)
        context.state["features"] = ArrayRecord({"x": torch.tensor(x)})  # a copy: x may be read-only (Ray)
        context.state["private"] = ArrayRecord({k: v[device.user : device.user + 1].clone() for k, v in private.items()})
    x = context.state["features"].to_torch_state_dict()["x"].numpy()
    return x, context.state["private"].to_torch_state_dict()


app = client_app(lambda context: Device.load(str(context.node_config["data"])))
