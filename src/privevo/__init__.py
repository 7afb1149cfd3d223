"""privevo: differentially private clustering and synthetic data by Private Evolution."""

__version__ = "0.1.0"

from .evolution import PrivateEvolution
from .exceptions import PrivacyLeakWarning

__all__ = ["PrivateEvolution", "PrivacyLeakWarning", "__version__"]
