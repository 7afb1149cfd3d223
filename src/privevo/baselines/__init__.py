"""DP k-means baselines, run side by side with PE-means (the PE-means paper's baselines).

Every baseline has the ``DPKMeans`` interface (``fit`` → ``cluster_centers_``,
``predict``, ``score``). They are reference implementations of *other*
papers' mechanisms, kept for honest comparisons; their private statistics
(per-cluster sums and counts) are computed in :mod:`privevo.baselines._private`.
"""

from .dplloyd import DPLloyd, dplloyd_iterations, split_epsilon
from .fastlloyd import FastLloyd
from .lsh_tree import LSHTreeKMeans
from .nonprivate import NonPrivateKMeans

__all__ = [
    "NonPrivateKMeans",
    "DPLloyd",
    "FastLloyd",
    "LSHTreeKMeans",
    "dplloyd_iterations",
    "split_epsilon",
]
