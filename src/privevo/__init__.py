"""privevo: differentially private clustering and synthetic data by Private Evolution."""

from ._version import __version__
from .budget import BudgetAccountant
from .evolution import PrivateEvolution
from .exceptions import PrivacyLeakWarning
from .kmeans import DPKMeans
from .tabular import TabularPE

__all__ = [
    "PrivateEvolution",
    "PrivacyLeakWarning",
    "DPKMeans",
    "BudgetAccountant",
    "TabularPE",
    "__version__",
]
