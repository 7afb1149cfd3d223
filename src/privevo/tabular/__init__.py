"""Tabular Private Evolution: DP synthetic DataFrames with categorical and numeric columns.

- :class:`TabularPE` — ``TabularPE(epsilon=1, metadata=meta).fit(df).sample(n)``;
- :class:`TableMetadata`, :class:`ColumnSpec` — the public schema (kinds, domains);
  :func:`metadata_from_description` (public) and :func:`metadata_from_data` (not DP);
- :class:`TableEmbedding` and the random / variation APIs the engine runs with.

pandas is needed (``pip install 'privevo[tabular]'``). See ``docs/tabular.md``.
"""

from .apis import (
    RoundTagged,
    TabPESelection,
    TabularRandomAPI,
    TabularVariationAPI,
    mutation_probability,
)
from .encoding import TableEmbedding, decode_codes, encode_table
from .estimator import TabularPE
from .metadata import ColumnSpec, TableMetadata, metadata_from_data, metadata_from_description

__all__ = [
    "TabularPE",
    "TableMetadata",
    "ColumnSpec",
    "metadata_from_data",
    "metadata_from_description",
    "TableEmbedding",
    "encode_table",
    "decode_codes",
    "TabularRandomAPI",
    "TabularVariationAPI",
    "TabPESelection",
    "RoundTagged",
    "mutation_probability",
]
