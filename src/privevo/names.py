"""The names and shared defaults every layer and command offers, stated once (standard library
only, so that building the command-line parser imports no numpy).

The modules that implement them (:mod:`privevo.adjacency`, :mod:`privevo.private`,
:mod:`privevo.selection`) and the commands' options read their choices from here.
"""

from __future__ import annotations

#: Which data sets are neighbours (docs/privacy.md, "Adjacency").
ADJACENCIES: tuple[str, ...] = ("add_remove", "replace")

#: The noises of a release an estimator offers (docs/privacy.md, "Noise").
NOISES: tuple[str, ...] = ("gaussian", "discrete_gaussian", "discrete_gaussian_secure")

#: Every selector name, in the order the front ends list them (:mod:`privevo.selection.registry`).
SELECTORS: tuple[str, ...] = ("rank", "subsample", "gape", "gape_agg", "weighted_kmeans")

#: The share of the budget a noisy row count takes where n is private (add/remove): DPKMeans'
#: default ``count_share`` and the baselines' count.
COUNT_SHARE = 0.02

#: The ε range the accountant is tested over (against an independent high-precision
#: computation): every entry point refuses an ε outside it.
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e6

#: The most private releases (rounds, steps) one parameter may ask for.
MAX_ROUNDS = 10_000
