"""The tabular tests' shared fixture: the metadata of helpers.tables' small table."""

from __future__ import annotations

import pytest

from helpers.tables import DESCRIPTION


@pytest.fixture
def meta():
    from privevo.tabular import metadata_from_description

    return metadata_from_description(DESCRIPTION)
