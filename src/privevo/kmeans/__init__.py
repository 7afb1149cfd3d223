"""DP k-means by Private Evolution: PE-means and HDPE-means (the PE-means paper).

PE-means is the engine loop :class:`privevo.PrivateEvolution` with these
plug-ins: a sphere-packed initial population of k·(L+1) centres
(:class:`~privevo.variation.SpherePacking`), the PE-means selector
(:class:`~privevo.selection.WeightedKMeans`: count threshold, adaptive
signal-to-noise, weighted k-means) and Lévy-flight variation
(:class:`~privevo.variation.LevyVariation`). Its only private access is the
noisy nearest-neighbour vote histogram (L2 sensitivity 1).

HDPE-means (d > 32) runs PE-means on an orthonormal projection to
d' = max(16, min(32, ⌊d/2⌋)) dimensions (the paper: 16) for T = ⌊4√d'⌋ rounds
at every ε (the paper: its PE-means rule). Its PE stage only has to find the
cells; the recover step estimates the centres. A wider projection keeps more
clusters apart, and more rounds do not sharpen the cells but give close
clusters more chances to merge (``benchmarks/kmeans_hdpe.py``). The projection
is private PCA by default: the top d' eigenvectors of the noisy second moment
Σxxᵀ ("Analyze Gauss", ``projection_share`` of μ²), which keep the directions
the clusters are spread along where a random projection (the paper's,
``projection="random"``) keeps about d'/d of their spread (``benchmarks/kmeans_hdpe.py``).

Both end with private *recover* steps, Lloyd steps in the original space (``recover_steps``;
the first is described here, the later ones sum offsets from the anchors, see the class doc):
every point goes to its nearest PE centre (HDPE: nearest in the projection),
the per-cluster sums (noise on every coordinate) and counts are released, and
the noisy means are shrunk towards the PE centres by an empirical-Bayes rule
(:func:`shrunk_means`). PE-means needs it because a point votes for the
candidate nearest to it and the Lévy candidates sit within a few γ of their
parent: a vote says in which *direction* a point lies, hardly how far. The
weighted k-means of the voted candidates then settles where the directions
balance — nearer a spatial median of the cell than the mean k-means needs
(``benchmarks/pe_means_bias.py`` measures this). ``recover_share=0`` turns the
step off (the paper's PE-means; HDPE always has it).

All releases — T histograms, the sums and the counts, and HDPE's second
moment — are Gaussian and compose exactly under GDP:
μ² = T/σ_h² + (R_s/σ_s)² + 1/σ_c² (+ 1/σ_m²).

The default plan — T = ⌊4√d⌋ rounds (d' for HDPE-means), the budget shares and
the number of recover steps — is the same at every ε: a larger ε lowers the σ
of every release and changes nothing else (:func:`pe_means_iterations`).
"""

from .estimator import DPKMeans
from .plan import (
    HDPE_RECOVER_SHARE,
    MAX_VARIATIONS,
    METHODS,
    PE_MEANS_RECOVER_SHARE,
    PROJECTIONS,
    RECOVER_STEPS,
    hdpe_projection_dim,
    paper_iterations,
    paper_variations,
    pe_means_iterations,
)
from .recover import (
    RECOVER_RADIUS,
    anchor_scales,
    centred_means,
    in_domain,
    pca_basis,
    recover_noise,
    recover_radii,
    shrunk_means,
)

__all__ = [
    "DPKMeans",
    "HDPE_RECOVER_SHARE",
    "MAX_VARIATIONS",
    "METHODS",
    "PE_MEANS_RECOVER_SHARE",
    "PROJECTIONS",
    "RECOVER_RADIUS",
    "RECOVER_STEPS",
    "anchor_scales",
    "centred_means",
    "hdpe_projection_dim",
    "in_domain",
    "recover_radii",
    "paper_iterations",
    "paper_variations",
    "pca_basis",
    "pe_means_iterations",
    "recover_noise",
    "shrunk_means",
]
