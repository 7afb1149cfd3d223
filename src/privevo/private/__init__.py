"""The private boundary: the only package of privevo that reads private rows or draws noise.

Everything outside it receives :class:`Release` values, public inputs and
:class:`Source` handles, and is post-processing. Layers, each importing only
the ones before it:

* :mod:`.flat`, :mod:`.lowd`, :mod:`.kernel` — the exact nearest-candidate
  vote kernels (numpy GEMM, the fused low-d extension, faiss), one block of
  rows at a time; :mod:`.votes` — k-neighbour and user-level votes;
* :mod:`.domain` — the public ball/box, clipping, and the leak fallback;
* :mod:`.blocks`, :mod:`.files`, :mod:`.dask`, :mod:`.sources` — the
  :class:`Source` protocol for arrays, Parquet/``.npy`` folders and Dask
  collections, and :func:`as_source`; :mod:`.frames` — private tables (pandas,
  Parquet, Dask DataFrames) read block by block through a public per-row map;
  :mod:`.kmeans_stats` — DPKMeans' rows at any size (the unit-ball map, HDPE's projection,
  the count, second moment and recover sums in chunks aligned on the row index);
* :mod:`.readers`, :mod:`.headers` — the one reader of private files (CSV/TSV,
  ``.npy``, Parquet, folders of parts, tables and files of texts): one rule set for headers, nulls,
  folders and errors;
* :mod:`.noise` — the exact discrete Gaussian sampler;
* :mod:`.release` — every noisy release, returned as a frozen
  :class:`Release`; :mod:`.statistics` — the baselines' releases.

docs/privacy.md ("The private boundary") lists these files.
"""

from .dask import backend_session, dask_session
from .domain import LEAK_NOTE, Domain, clip_to_ball, public_domain
from .files import (
    BlockSource,
    ClippedSource,
    NpySource,
    ParquetSource,
    is_parquet_file,
    open_source,
)
from .frames import FrameSource, MappedSource, frame_source, select_columns
from .headers import (
    TABLE_FORMATS,
    TEXT_FORMATS,
    named_header,
    read_labelled_texts,
    read_text_table,
    read_texts,
    scan_delimited,
    text_column,
)
from .kernel import (
    METRICS,
    PreparedCandidates,
    available_backends,
    expand_counts,
    partial_counts,
    prepare_candidates,
    reference_assign,
    register_backend,
)
from .kmeans_stats import (
    CACHE_MIB,
    ChunkedRows,
    RecoverRows,
    ScaledDomain,
    is_lazy,
    lazy_input,
    project_rows,
    row_blocks,
    row_count,
    row_dim,
    scaled_domain,
    unit_rows,
)
from .noise import discrete_gaussian, discrete_gaussian_pmf
from .readers import (
    READ_FORMATS,
    Table,
    hidden_parts,
    naming_the_file,
    parse_columns,
    read_data,
    read_folder,
    read_points,
    read_table,
)
from .release import (
    NOISES,
    Release,
    calibrate,
    cluster_sums_sensitivity,
    exact_nn_histogram,
    lattice_sensitivity,
    lattice_step,
    noisy_cluster_sums,
    noisy_count,
    noisy_nn_histogram,
    noisy_second_moment,
    noisy_statistic,
    release_noise,
    second_moment_sensitivity,
)
from .sources import (
    Source,
    as_source,
    cluster_sums,
    data_digest,
    lazy_rows,
    nn_histogram,
    second_moment,
)
from .statistics import (
    baseline_row_count,
    cluster_statistics,
    dplloyd_release,
    fastlloyd_release,
    lsh_leaf_sums,
    lsh_level_counts,
)
from .tables import (
    ExponentialChoices,
    exponential_choice,
    noisy_cell_counts,
    noisy_dependence_scores,
)
from .votes import check_vote_arguments, privacy_unit, reference_votes, vote_sensitivity

__all__ = [
    "CACHE_MIB",
    "ChunkedRows",
    "RecoverRows",
    "ScaledDomain",
    "is_lazy",
    "lazy_input",
    "project_rows",
    "row_blocks",
    "row_count",
    "row_dim",
    "scaled_domain",
    "unit_rows",
    "LEAK_NOTE",
    "METRICS",
    "NOISES",
    "BlockSource",
    "ClippedSource",
    "Domain",
    "FrameSource",
    "MappedSource",
    "NpySource",
    "ParquetSource",
    "Release",
    "PreparedCandidates",
    "READ_FORMATS",
    "TABLE_FORMATS",
    "TEXT_FORMATS",
    "Table",
    "Source",
    "as_source",
    "available_backends",
    "backend_session",
    "baseline_row_count",
    "calibrate",
    "check_vote_arguments",
    "clip_to_ball",
    "cluster_statistics",
    "cluster_sums_sensitivity",
    "cluster_sums",
    "dask_session",
    "data_digest",
    "discrete_gaussian",
    "discrete_gaussian_pmf",
    "dplloyd_release",
    "exact_nn_histogram",
    "expand_counts",
    "fastlloyd_release",
    "frame_source",
    "is_parquet_file",
    "select_columns",
    "hidden_parts",
    "lattice_sensitivity",
    "lattice_step",
    "lazy_rows",
    "lsh_leaf_sums",
    "lsh_level_counts",
    "named_header",
    "naming_the_file",
    "nn_histogram",
    "noisy_cluster_sums",
    "noisy_cell_counts",
    "exponential_choice",
    "ExponentialChoices",
    "noisy_count",
    "noisy_dependence_scores",
    "noisy_nn_histogram",
    "noisy_second_moment",
    "noisy_statistic",
    "open_source",
    "parse_columns",
    "partial_counts",
    "prepare_candidates",
    "privacy_unit",
    "public_domain",
    "read_data",
    "read_folder",
    "read_labelled_texts",
    "read_points",
    "read_table",
    "read_text_table",
    "read_texts",
    "reference_assign",
    "reference_votes",
    "register_backend",
    "release_noise",
    "scan_delimited",
    "second_moment",
    "second_moment_sensitivity",
    "text_column",
    "vote_sensitivity",
]
