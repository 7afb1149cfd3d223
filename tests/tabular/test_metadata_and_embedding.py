"""Public table metadata (descriptions, JSON), the embedding and the mutation schedule."""

from __future__ import annotations

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo.tabular import (  # noqa: E402
    TableEmbedding,
    TableMetadata,
    encode_table,
    metadata_from_description,
    mutation_probability,
)


def test_description_and_json_round_trip(tmp_path, meta):
    path = tmp_path / "meta.json"
    meta.to_json(path)
    assert TableMetadata.from_json(path) == meta
    assert meta["size"].lower == 0 and meta["color"].other == "other" and meta["shade"].nullable


def test_description_checks_the_header():
    with pytest.raises(ValueError, match="does not describe"):
        metadata_from_description(DESCRIPTION, ["color", "shade", "size", "weight", "flag", "age"])
    with pytest.raises(ValueError, match="line 2"):
        metadata_from_description("a: boolean\nb: integer 0-5")


def test_embedding_round_trip_and_equal_column_weights(meta):
    emb = TableEmbedding(meta)
    codes = encode_table(small_table(50), meta)
    back = emb.decode(emb.embed(codes))
    np.testing.assert_array_equal(np.isnan(back), np.isnan(codes))
    np.testing.assert_allclose(np.nan_to_num(back), np.nan_to_num(codes))
    a, b = emb.embed(codes[:1].copy()), codes[:1].copy()
    b[0, 0] = (b[0, 0] + 1) % 4  # another category: squared distance exactly 1
    assert np.sum((emb.embed(b) - a) ** 2) == pytest.approx(1.0)


def test_mutation_schedule():
    assert mutation_probability(0, 10, 0.5, 0.01) == pytest.approx(0.5)
    assert mutation_probability(8, 10, 0.5, 0.01) == pytest.approx(0.01)
    assert mutation_probability(4, 10, 0.5, 0.01) < mutation_probability(3, 10, 0.5, 0.01)
