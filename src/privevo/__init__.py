"""privevo: differentially private clustering and synthetic data by Private Evolution."""

__version__ = "0.1.0"

from .evolution import PrivateEvolution
from .exceptions import PrivacyLeakWarning
from .kmeans import DPKMeans

__all__ = ["PrivateEvolution", "PrivacyLeakWarning", "DPKMeans", "__version__"]
