"""recprivacy: measure and reduce privacy leakage in recommender systems."""

__version__ = "0.1.0"
