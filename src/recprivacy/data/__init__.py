"""Data model, loaders, preprocessing, splits and the synthetic generator."""

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.interactions import Interactions

__all__ = ["Interactions", "ExposureLog"]
