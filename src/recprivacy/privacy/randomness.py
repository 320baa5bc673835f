"""Where the randomness that protects people comes from: ``NoiseSource``.

Every mechanism applied to data about people (LDP reports, DP noise, randomised lists and
slates, synthetic releases) draws from a generator handed out here, in one of two modes:

* ``"secure"`` (the default): every call seeds a new generator with 128 bits (torch: 64 bits)
  from the operating system's entropy (``secrets``), so nobody can replay the noise, not even
  with the run's published seed and config;
* ``"simulation"``: the generator of a named stream is derived from the seed and the stream
  ids, ``numpy.random.default_rng([seed, *stream])`` (string ids enter as their CRC-32), so a
  study repeats exactly. It is for experiments and tests only: anyone who knows the seed can
  replay the noise and undo the protection, and every report says so (``describe``).

``DrawRecord`` hands out a source's generators and tells afterwards whether any was drawn
from: a result made without a draw is the same in every run, whatever the mode.

Randomness that protects nobody (initialisation, negative sampling, data splits, attacker
training) stays seeded by the model's own ``seed`` and does not come from here.

Decision: the generators are numpy's PCG64 and torch's Mersenne twister seeded from the OS,
not a cryptographic generator per draw. They close the replay attack (a published seed
recovers the noise); they are not a defence against an adversary who observes long raw noise
sequences and inverts the generator, nor against floating-point attacks on the textbook
Laplace sampler (Mironov 2012).
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from recprivacy.errors import ConfigError
from recprivacy.privacy.accounting import PrivacyStatement

if TYPE_CHECKING:
    import torch

NoiseMode = Literal["secure", "simulation"]
NOISE_MODES: tuple[str, ...] = ("secure", "simulation")
StreamId = int | str
Stamped = TypeVar("Stamped", PrivacyStatement, Mapping[str, PrivacyStatement])


def check_mode(mode: str, field: str = "noise") -> str:
    """Return ``mode`` if it is ``"secure"`` or ``"simulation"``; ``ConfigError`` naming ``field`` otherwise."""
    if mode not in NOISE_MODES:
        raise ConfigError(f"{field}: expected 'secure' or 'simulation', got {mode!r}")
    return mode


def _stream_words(stream: tuple[StreamId, ...]) -> list[int]:
    """Stream ids as non-negative integers (a string id becomes its CRC-32)."""
    words = []
    for part in stream:
        value = zlib.crc32(part.encode()) if isinstance(part, str) else int(part)
        if value < 0:
            raise ConfigError(f"noise stream ids must be non-negative integers or strings, got {part!r}")
        words.append(value)
    return words


@dataclass(frozen=True)
class NoiseSource:
    """Generators for protection randomness (module docstring).

    Parameters
    ----------
    mode:
        ``"secure"`` (operating-system entropy, the default) or ``"simulation"`` (seeded).
    seed:
        The seed of simulation mode (required there; unused in secure mode).
    """

    mode: NoiseMode = "secure"
    seed: int | None = None

    def __post_init__(self) -> None:
        check_mode(self.mode)
        if self.mode == "simulation" and self.seed is None:
            raise ConfigError("noise: simulation mode needs a seed (set seed, or use noise: secure)")

    @property
    def secure(self) -> bool:
        return self.mode == "secure"

    def generator(self, *stream: StreamId) -> np.random.Generator:
        """A numpy generator for ``stream``: fresh OS entropy (secure) or
        ``default_rng([seed, *stream])`` (simulation; no stream gives ``default_rng(seed)``)."""
        if self.secure:
            return np.random.default_rng(secrets.randbits(128))
        return np.random.default_rng([int(self.seed), *_stream_words(stream)])

    def torch_generator(self, *stream: StreamId) -> torch.Generator:
        """A CPU ``torch.Generator`` for ``stream``: seeded from OS entropy (secure), or with
        ``seed`` (no stream) or a 64-bit word of ``SeedSequence([seed, *stream])`` (simulation)."""
        import torch

        if self.secure:
            return torch.Generator().manual_seed(secrets.randbits(64))
        if not stream:
            return torch.Generator().manual_seed(int(self.seed))
        words = np.random.SeedSequence([int(self.seed), *_stream_words(stream)]).generate_state(1, np.uint64)
        return torch.Generator().manual_seed(int(words[0]))

    def describe(self) -> str:
        """What a reader of a report needs to know about the noise."""
        if self.secure:
            return "secure: operating-system entropy"
        return f"simulation (seeded, not protection): seed {self.seed}, for experiments only"

    def stamp(self, statements: Stamped) -> Stamped:
        """``statements`` (one, its parts too, or a labelled mapping) carrying this source's ``describe()``."""
        if isinstance(statements, PrivacyStatement):
            parts = tuple((label, self.stamp(s)) for label, s in statements.parts)
            return replace(statements, noise=self.describe(), parts=parts)
        return {label: self.stamp(s) for label, s in statements.items()}


Generator = TypeVar("Generator", np.random.Generator, "torch.Generator")


def _state(generator: np.random.Generator | torch.Generator) -> bytes:
    """The state of a numpy or torch generator, as bytes."""
    if isinstance(generator, np.random.Generator):
        return repr(generator.bit_generator.state).encode()
    return generator.get_state().numpy().tobytes()


@dataclass
class DrawRecord:
    """A ``NoiseSource``'s generators, handed out as the source hands them out, and whether any
    of them has been drawn from since (``drawn``: its state moved). A result made without a
    draw does not depend on the noise at all: every secure run gives the same one."""

    source: NoiseSource
    handed: list[tuple[np.random.Generator | torch.Generator, bytes]] = field(default_factory=list)

    def generator(self, *stream: StreamId) -> np.random.Generator:
        """``source.generator(*stream)``, recorded."""
        return self._keep(self.source.generator(*stream))

    def torch_generator(self, *stream: StreamId) -> torch.Generator:
        """``source.torch_generator(*stream)``, recorded."""
        return self._keep(self.source.torch_generator(*stream))

    @property
    def drawn(self) -> bool:
        """Whether a generator handed out has been drawn from."""
        return any(_state(generator) != state for generator, state in self.handed)

    def _keep(self, generator: Generator) -> Generator:
        self.handed.append((generator, _state(generator)))
        return generator


class NoiseMixin:
    """For estimators with a ``noise`` mode and a ``seed`` hyperparameter (scikit-learn style
    mixin): ``noise_source()`` is where their protection randomness comes from."""

    noise: str
    seed: int

    def noise_source(self) -> NoiseSource:
        """``NoiseSource(noise, seed)``: OS entropy, or the seeded simulation streams."""
        return NoiseSource(self.noise, self.seed)
