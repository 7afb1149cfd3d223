"""privevo: differentially private clustering and synthetic data by Private Evolution."""

from ._version import __version__
from .evolution import PrivateEvolution
from .exceptions import PrivacyLeakWarning
from .kmeans import DPKMeans
from .budget import BudgetAccountant
from .tabular import TabularPE

__all__ = ["PrivateEvolution", "PrivacyLeakWarning", "DPKMeans", "BudgetAccountant", "TabularPE", "__version__"]
