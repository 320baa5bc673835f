"""YAML study configurations, validated by pydantic.

A config names a study (the runner that executes it: ``train``, ``audit``, ...), the dataset and
how it is prepared, the model, the evaluation cut-offs, the seed and where the run is written::

    name: ml-100k-bpr
    study: train
    seed: 0
    noise: secure                # or simulation: seeded protection noise, for experiments only
    threads: null                # threads training may use (null: every core of the machine)
    dataset:
      name: ml-100k
      data_dir: ../shared/datasets
      options: {}                 # passed to the loader (e.g. n_users for synthetic)
      preprocessing: {implicit_threshold: 4, kcore: 5}
      split: {kind: random, ratios: [0.8, 0.1, 0.1]}
    model: {name: bpr, params: {n_factors: 64}}
    eval: {ks: [10, 20]}
    output: {dir: runs}
    study_options: {}            # validated by the study's own options model

Every section forbids unknown keys, so a typo fails at once with one line naming the key, where
it is (file and line, or the ``--set`` override) and the allowed keys; a key given twice in one
mapping of the file is refused at the line of its second occurrence; enumerations are
``Literal`` types so the message lists the allowed values. ``noise`` says where the randomness
of every privacy mechanism comes from: ``secure`` (operating-system entropy, the default) or
``simulation`` (seeded by ``seed``, so a study repeats exactly, but it protects nobody);
``noise_source()`` gives the run's ``privacy.randomness.NoiseSource``. The model name is checked
against ``models.MODEL_NAMES`` without importing a model; ``model.params``, when given, by
constructing the model. ``study_options`` stays a free dict here because the studies live above
this module: each study registers a :class:`StudyOptions` subclass with
``recprivacy.experiments.runner.register_study`` and the runner validates it (with
:func:`validate_options`) before any work starts.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from recprivacy.errors import ConfigError, RecPrivacyError
from recprivacy.models import check_model_name, make_model

if TYPE_CHECKING:
    from recprivacy.privacy.randomness import NoiseSource

Location = tuple[str | int, ...]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class StrictModel(BaseModel):
    """A config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class StudyOptions(StrictModel):
    """Base class of the options a study accepts under ``study_options``."""


class PreprocessConfig(StrictModel):
    """Filters applied after loading (see ``recprivacy.data.preprocess.preprocess``);
    ``kcore`` is one k for users and items or a ``[user_k, item_k]`` pair."""

    implicit_threshold: float | None = None
    kcore: PositiveInt | tuple[PositiveInt, PositiveInt] | None = None
    min_user: PositiveInt | None = None
    dedup: bool = True


class SplitConfig(StrictModel):
    """How interactions are split into train / validation / test.

    ``random``: per-user random split by ``ratios``. ``temporal``: by time, either by ``ratios``
    or, with ``leave_last``, each user's last interactions go to test (and the ones before to
    validation).
    """

    kind: Literal["random", "temporal"] = "random"
    ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)
    leave_last: PositiveInt | None = None

    @field_validator("ratios")
    @classmethod
    def _ratios_sum_to_one(cls, ratios: tuple[float, float, float]) -> tuple[float, float, float]:
        if min(ratios) <= 0 or abs(sum(ratios) - 1.0) > 1e-6:
            raise PydanticCustomError(
                "ratios", "expected three positive fractions (train, valid, test) summing to 1", {}
            )
        return ratios

    @model_validator(mode="after")
    def _leave_last_is_temporal(self) -> "SplitConfig":
        if self.leave_last is not None and self.kind != "temporal":
            raise PydanticCustomError("split", "leave_last applies only to kind: temporal", {})
        return self


class DatasetConfig(StrictModel):
    """Which dataset (a registered name or a path), where its files are, and its preparation."""

    name: str = "synthetic"
    data_dir: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    preprocessing: PreprocessConfig = Field(default_factory=PreprocessConfig)
    split: SplitConfig = Field(default_factory=SplitConfig)


class ModelConfig(StrictModel):
    """A recommender from ``recprivacy.models.MODELS`` and its constructor arguments."""

    name: str = "bpr"
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _constructible(self) -> "ModelConfig":
        """The name must be registered (checked without importing the model); parameters are
        checked by constructing the model, which imports its module (and torch) only then."""
        try:
            check_model_name(self.name)
            if self.params:
                make_model(self.name, **self.params)
        except (RecPrivacyError, TypeError, ValueError) as err:
            raise PydanticCustomError("model", "{err}", {"err": _one_line(err)}) from err
        return self


class EvalConfig(StrictModel):
    """Cut-offs of the full-ranking metrics."""

    ks: list[PositiveInt] = Field(default_factory=lambda: [10, 20], min_length=1)


class OutputConfig(StrictModel):
    """Where runs are written (``<dir>/<time>-<name>/``)."""

    dir: str = "runs"


class Config(StrictModel):
    """A complete study configuration."""

    name: str = Field("run", pattern=NAME_PATTERN)
    study: str = Field("train", pattern=NAME_PATTERN)
    seed: int = Field(0, ge=0)
    noise: Literal["secure", "simulation"] = "secure"
    threads: PositiveInt | None = None
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    study_options: dict[str, Any] = Field(default_factory=dict)

    def noise_source(self) -> NoiseSource:
        """Where this run's protection randomness comes from (``noise`` mode, ``seed``)."""
        from recprivacy.privacy.randomness import NoiseSource

        return NoiseSource(self.noise, self.seed)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible dict (what ``config.yaml`` of a run holds)."""
        return self.model_dump(mode="json")

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def default_audit_config() -> dict[str, Any]:
    """What ``recprivacy audit`` runs without ``--config`` (``configs/audit/default.yaml``
    holds the same): BPR-MF with its default hyperparameters on the built-in synthetic
    dataset."""
    return {"name": "audit", "study": "audit", "seed": 0, "dataset": {"name": "synthetic"},
            "model": {"name": "bpr", "params": {}}, "eval": {"ks": [10, 20]}}  # fmt: skip


def default_synthesize_config() -> dict[str, Any]:
    """What ``recprivacy synthesize`` starts from without ``--config``: BPR-MF features on
    the configured dataset, the generator's defaults."""
    return {"name": "synthesize", "study": "upcsdg", "seed": 0, "dataset": {"name": "synthetic"},
            "model": {"name": "bpr", "params": {}}}  # fmt: skip


# ---------------------------------------------------------------------------- loading


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    updates: Mapping[str, Any] | None = None,
    base: Mapping[str, Any] | None = None,
) -> Config:
    """Read and validate a config.

    Parameters
    ----------
    path:
        YAML file; without it the config starts from ``base`` (or all defaults).
    overrides:
        ``--set`` items ``key.sub=value``; the value is parsed as YAML (``3`` is an int,
        ``[5, 10]`` a list, ``null`` None). Applied last.
    updates:
        Dotted keys with Python values (what CLI options such as ``--dataset`` set), applied
        before ``overrides``.
    base:
        Starting mapping when ``path`` is None.

    Raises
    ------
    ConfigError
        One line naming the file (and line) or override, the key and what was expected.
    """
    raw: dict[str, Any]
    lines: dict[Location, int] = {}
    source = "config"
    if path is None:
        raw = copy.deepcopy(dict(base or {}))
    else:
        path = Path(path)
        source = str(path)
        text = _read_text(path)
        raw = _parse_yaml(text, source)
        lines = _key_lines(text)
        raw.setdefault("name", re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-.") or "run")
    origins: dict[Location, str] = {}
    for key, value in (updates or {}).items():
        label = f"{key}={value}"
        origins[_assign(raw, key, value, label)] = label
    for item in overrides:
        key, value = _parse_override(item)
        origins[_assign(raw, key, value, f"--set {item}")] = f"--set {item}"
    try:
        return Config.model_validate(raw)
    except ValidationError as err:
        raise config_error(err, Config, source, lines=lines, origins=origins) from None


def validate_options(model: type[BaseModel], raw: Mapping[str, Any], prefix: Location = ("study_options",)) -> Any:
    """Validate a study's (or an audit section's) options; errors name ``prefix.key``."""
    try:
        return model.model_validate(dict(raw))
    except ValidationError as err:
        raise config_error(err, model, "config", prefix=prefix) from None


def config_error(
    err: ValidationError,
    model: type[BaseModel],
    source: str,
    prefix: Location = (),
    lines: Mapping[Location, int] | None = None,
    origins: Mapping[Location, str] | None = None,
) -> ConfigError:
    """Turn a pydantic error into one line: ``where: key: problem`` (+ count of further problems)."""
    errors = err.errors(include_url=False)
    first = errors[0]
    loc: Location = prefix + tuple(first["loc"])
    where = _where(loc, source, lines or {}, origins or {})
    key = ".".join(str(p) for p in loc) or "(top level)"
    if first["type"] == "extra_forbidden":
        parent = loc[:-1]
        allowed = ", ".join(sorted(_allowed_keys(model, parent[len(prefix) :])))
        where_in = ".".join(str(p) for p in parent) or "the top level"
        message = f"unknown key {loc[-1]!r} in {where_in}; allowed keys: {allowed}"
    else:
        message = f"{key}: {first['msg']}"
        if first["type"] not in ("missing",) and "input" in first and not isinstance(first["input"], dict):
            message += f" (got {first['input']!r})"
    more = len(errors) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return ConfigError(f"{where}: {message}")


# ---------------------------------------------------------------------------- helpers


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def _read_text(path: Path) -> str:
    if not path.exists():
        raise ConfigError(f"{path}: config file not found")
    if not path.is_file():
        raise ConfigError(f"{path}: expected a YAML config file, found a directory")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config: {_one_line(err)}") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """A ``SafeLoader`` that refuses a mapping giving a key twice (PyYAML keeps the last one
    silently, so ``noise: secure`` followed by ``noise: simulation`` would run seeded noise).
    Keys merged in with ``<<`` may still be overridden, as YAML intends."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, typing.Hashable):  # SafeConstructor reports it below
                continue
            if key in first_line:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice in one mapping (first on line {first_line[key]}); "
                    "expected each key once", key_node.start_mark)  # fmt: skip
            first_line[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _parse_yaml(text: str, source: str) -> dict[str, Any]:
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: plain data only
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or _one_line(err)
        raise ConfigError(f"{source}{line}: invalid YAML: {problem}") from None
    if raw is None:
        raise ConfigError(f"{source}: the config is empty (no keys); expected a mapping such as 'study: train'")
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of sections (name, study, dataset, model, ...), got {type(raw).__name__}")
    return raw


def _key_lines(text: str) -> dict[Location, int]:
    """1-based line of every key path in a YAML document (for error messages)."""
    out: dict[Location, int] = {}

    def walk(node: yaml.Node, loc: Location) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                sub = loc + (key_node.value,)
                out[sub] = key_node.start_mark.line + 1
                walk(value_node, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                out[loc + (i,)] = item.start_mark.line + 1
                walk(item, loc + (i,))

    root = yaml.compose(text)
    if root is not None:
        walk(root, ())
    return out


def _where(loc: Location, source: str, lines: Mapping[Location, int], origins: Mapping[Location, str]) -> str:
    for n in range(len(loc), 0, -1):
        if loc[:n] in origins:
            return origins[loc[:n]]
    for key, origin in origins.items():
        if loc and key[: len(loc)] == loc:
            return origin
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return f"{source}:{lines[loc[:n]]}"
    return source


def _parse_override(item: str) -> tuple[str, Any]:
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item}: expected KEY=VALUE, e.g. --set model.params.epochs=5")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {item}: value is not valid YAML: {getattr(err, 'problem', None) or _one_line(err)}") from None
    return key.strip(), value


def _assign(raw: dict[str, Any], dotted: str, value: Any, origin: str) -> Location:
    """Set ``raw[a][b][c] = value`` for ``a.b.c``, checking each key against the schema until
    a free-form dict (``options``, ``params``, ``study_options``) is reached."""
    parts = tuple(dotted.split("."))
    if any(not p for p in parts):
        raise ConfigError(f"{origin}: empty key segment in {dotted!r}")
    schema: Any = Config
    node = raw
    for depth, part in enumerate(parts):
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            if part not in schema.model_fields:
                where = ".".join(parts[:depth]) or "the top level"
                allowed = ", ".join(sorted(schema.model_fields))
                raise ConfigError(f"{origin}: unknown key {part!r} in {where}; allowed keys: {allowed}")
            schema = _section_type(schema.model_fields[part].annotation)
        elif schema is None:
            raise ConfigError(f"{origin}: {'.'.join(parts[:depth])} is a value, not a section")
        if depth == len(parts) - 1:
            node[part] = value
        else:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{origin}: {'.'.join(parts[: depth + 1])} is a value, not a section")
            node = child
    return parts


def _section_type(annotation: Any) -> Any:
    """A config model class, ``dict`` for a free-form mapping, or None for a plain value."""
    candidates = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
        if candidate is dict or typing.get_origin(candidate) is dict:
            return dict
    return None



def _allowed_keys(model: type[BaseModel], loc: Location) -> list[str]:
    """Field names of the config section at ``loc`` inside ``model``."""
    schema: Any = model
    for part in loc:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)) or part not in schema.model_fields:
            return []
        schema = _section_type(schema.model_fields[part].annotation)
    return list(schema.model_fields) if isinstance(schema, type) and issubclass(schema, BaseModel) else []
