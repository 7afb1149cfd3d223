import numpy as np
import pytest

from privevo import evaluation, metrics


def test_kmeans_loss():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0]])
    assert metrics.kmeans_loss(X, [[1.0, 0.0], [10.0, 0.0]]) == pytest.approx(2 / 3)
    assert metrics.kmeans_loss(X, X) == 0.0


def test_area_under_curve_is_raw_trapezoid():
    eps = [0.25, 0.5, 1, 2, 4]
    assert metrics.area_under_curve(eps, [0.0207] * 5) == pytest.approx(0.0207 * 3.75)
    assert metrics.area_under_curve([4, 0.25], [1, 1]) == pytest.approx(3.75)


def test_sinkhorn_w1_self_zero_and_translation():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    assert metrics.sinkhorn_w1(X, X) == pytest.approx(0.0, abs=1e-9)
    # a translation by t has W1 = t; the entropic blur under-reads it (reg = 0.05 of the cost range)
    readings = [metrics.sinkhorn_w1(X, X + [t, 0, 0]) for t in (0.5, 1.0, 2.0)]
    assert readings == sorted(readings)
    assert 0.6 <= readings[1] <= 1.05 and 0.6 * 2 <= readings[2] <= 1.05 * 2
    assert metrics.exact_w1(X, X + [1.0, 0, 0]) == pytest.approx(1.0)


def test_knn_precision_recall():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    assert metrics.knn_precision_recall(X, X, k=3) == (1.0, 1.0)
    far = X + 100
    assert metrics.knn_precision_recall(X, far, k=3) == (0.0, 0.0)
    # half the real set copied: precision 1, recall between the copied share and 1
    p, r = metrics.knn_precision_recall(X, X[:150], k=3)
    assert p == 1.0 and 0.5 <= r < 1.0


def test_cluster_coverage_and_max_distance():
    centers = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    synth = np.array([[0.1, 0.0], [5.0, 0.2]])
    assert metrics.cluster_coverage(centers, synth, 0.3) == pytest.approx(2 / 3)
    assert metrics.max_coverage_distance(centers, synth) == pytest.approx(np.hypot(0.1, 5.0))


def test_intrinsic_dimension_of_subspace_data():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((50, 3)))[0].T  # orthonormal 3-D subspace of R^50
    pts = rng.standard_normal((2000, 3)) @ basis
    assert metrics.intrinsic_dimension(pts) == 3
    assert metrics.intrinsic_dimension(pts, variance=0.3) == 1
    with pytest.raises(ValueError, match="variance"):
        metrics.intrinsic_dimension(pts, variance=1.5)


def _table(n: int, seed: int, shift: float = 0.0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    x = rng.exponential(5.0, n) + shift  # skewed: most values in the first tenth of [0, 100]
    label = np.where(x + rng.normal(0, 2, n) > 5 + shift, "hi", "lo")
    z = x + rng.normal(0, 1, n)
    return pd.DataFrame({"x": np.clip(x, 0, 100), "z": np.clip(z, 0, 100), "label": label})


def _meta():
    from privevo.tabular import metadata_from_description

    return metadata_from_description(
        "x: numeric 0..100\nz: numeric 0..100\nlabel: categorical hi, lo"
    )


def test_quantile_tvd_sees_inside_a_public_bin():
    real, same, shifted = _table(4000, 0), _table(4000, 1), _table(4000, 1, shift=3.0)
    meta = _meta()
    assert evaluation.quantile_tvd(real, same, meta, 2) < 0.05
    assert evaluation.quantile_tvd(real, shifted, meta, 2) > 0.15
    assert evaluation.quantile_tvd(real, shifted, meta, 3) > evaluation.quantile_tvd(
        real, same, meta, 3
    )
    # the public 10 bins barely see a shift of 3 (a third of one bin)
    assert evaluation.marginal_tvd(real, shifted, meta, 2) < evaluation.quantile_tvd(
        real, shifted, meta, 2
    )


def test_numeric_errors_and_auc():
    real, shifted = _table(3000, 0), _table(3000, 1, shift=3.0)
    meta = _meta()
    err = evaluation.numeric_errors(real, shifted, meta)
    assert set(err) == {"x", "z"} and err["x"]["w1_sd"] == pytest.approx(
        3 / np.std(real["x"]), rel=0.15
    )
    assert err["x"]["median_sd"] == pytest.approx(3 / np.std(real["x"]), rel=0.15)
    assert (
        err["x"]["median"] > 0.5 and evaluation.numeric_errors(real, real, meta)["x"]["mean"] == 0
    )
    scores = evaluation.downstream_accuracy(_table(3000, 2), real, _table(2000, 3), "label", meta)
    assert 0.8 < scores["real_auc"] <= 1 and 0.8 < scores["synthetic_auc"] <= 1
    flipped = _table(3000, 2).assign(label=lambda d: np.where(d["label"] == "hi", "lo", "hi"))
    assert (
        evaluation.downstream_accuracy(flipped, real, _table(2000, 3), "label", meta)[
            "synthetic_auc"
        ]
        < 0.2
    )
