"""Deprecated alias: the discrete Gaussian sampler moved to :mod:`privevo.private`."""

from ._deprecated import warn_moved
from .private import discrete_gaussian, discrete_gaussian_pmf  # noqa: F401  re-exported names

warn_moved("privevo.noise", "privevo.private")
