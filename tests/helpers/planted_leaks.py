"""The planted-leak catalogue: small leaks of distinct kinds, each a text patch to a package copy.

The privacy checks are only as good as the leaks they catch. Each :class:`Plant` replaces one or
more snippets of the package's source (each must occur exactly once, so a plant that no longer
applies fails loudly) and names the entry points (tests/helpers/entry_points.py) whose generic
checks — the generated-neighbour byte replay and the sensitivity replay — must catch it. No check
is written for a plant: tests/privacy/test_planted_leaks.py runs the same generic checks on every
plant.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plant:
    name: str
    file: str  # relative to src/privevo
    edits: tuple[tuple[str, str], ...]  # (old, new) snippets, applied in order
    entry_points: tuple[str, ...]  # ENTRY_POINTS ids the generic checks run on


_COUNT_CALL = "prepared, source.count(prepared, backend, chunk_size, n_threads))"
_HISTOGRAM = (
    "        return noisy_nn_histogram(X, candidates, self.sigma_, rng, noise=self.noise, **votes)"
)
_PE_PUBLIC = '            "n_neighbors": self.n_neighbors,\n'
_LABEL_BLOCK = "    index = {str(name): j for j, name in enumerate(names)}\n"
_VOTE_SENS = '    return 1.0 if check_adjacency(adjacency) == "add_remove" else math.sqrt(2.0)'
_CLIP = "    out = X.copy()\n    if outside.any():\n"
_KM_SIZE = '        else {"n_estimate": est.evolution_.n_private}\n'
_NOISY_STAT = "    observe_exact(name, parts, sensitivity, noise, adjacency)\n"
_TEXT_POPULATION = "        population = self._population(names if labels is not None else None)\n"
_TAB_FIT = '    def fit(self, df, y=None) -> "TabularPE":\n'
_TAB_SAMPLE = "        return decode_codes(codes, self.metadata_)\n"
_PE_FINISH = "        self.synthetic_ = state.selection.points\n"
_KM_OUTPUTS = "        self.method_ = cfg.method\n"
_CLIP_OFFSETS = "    X, scale, unit = _scaled_offsets(X, center)\n"

PLANTS = (
    Plant(
        "report: the exact row count",
        "evolution.py",
        (
            (_HISTOGRAM, "        self._rows = len(X)\n" + _HISTOGRAM),
            (_PE_PUBLIC, _PE_PUBLIC + '            "rows": getattr(self, "_rows", None),\n'),
        ),
        ("pe rank/add_remove",),
    ),
    Plant(
        "report: the row count rounded to a block of 50",
        "evolution.py",
        (
            (_HISTOGRAM, "        self._rows = len(X) // 50\n" + _HISTOGRAM),
            (_PE_PUBLIC, _PE_PUBLIC + '            "blocks": getattr(self, "_rows", None),\n'),
        ),
        ("pe gape_agg/add_remove",),
    ),
    Plant(
        "k-means report: n_samples under add/remove",
        "kmeans/reporting.py",
        ((_KM_SIZE, '        else {"n_samples": len(est.labels_)}\n'),),
        ("dpkmeans/add_remove",),
    ),
    Plant(
        "sensitivity: every vote counted twice",
        "private/sources.py",
        (
            (
                "    return expand_counts(" + _COUNT_CALL,
                "    return 2 * expand_counts(" + _COUNT_CALL,
            ),
        ),
        ("pe subsample/add_remove",),
    ),
    Plant(
        "sensitivity: the vote histogram declared at half",
        "adjacency.py",
        ((_VOTE_SENS, _VOTE_SENS.replace("return 1.0", "return 0.5")),),
        ("pe weighted_kmeans/add_remove",),
    ),
    Plant(
        "sensitivity: replace declared as add/remove",
        "adjacency.py",
        ((_VOTE_SENS, "    return 1.0"),),
        ("pe rank/replace",),
    ),
    Plant(
        "sensitivity: rows not clipped before the cluster sums",
        "private/domain.py",
        ((_CLIP, "    out = X.copy()\n    if False:\n"),),
        ("dpkmeans/add_remove",),
    ),
    Plant(
        "a message quoting a private cell",
        "private/domain.py",
        (
            (
                _CLIP,
                _CLIP
                + "        import warnings\n\n"
                + '        warnings.warn(f"clipped a row at {X[outside][0][0]:.3g}")\n',
            ),
        ),
        ("cli kmeans csv/add_remove",),
    ),
    Plant(
        "a private label joins the public label list",
        "text/labels.py",
        (
            (
                _LABEL_BLOCK,
                "    names = [*names, *sorted({str(x) for x in labels} - set(map(str, names)))]\n"
                + _LABEL_BLOCK,
            ),
        ),
        ("labelled text pe/add_remove",),
    ),
    Plant(
        "a base model's examples are the first private texts",
        "text/evolution.py",
        (
            (
                _TEXT_POPULATION,
                _TEXT_POPULATION
                + "        if texts is not None and population.random_api.examples is None:\n"
                + "            population.random_api.examples = list(texts[:3])\n",
            ),
        ),
        (
            "text pe base model/add_remove",
            "text pe base model/replace",
            "cli synth-text base model/add_remove",
        ),
    ),
    Plant(
        "a label's examples are its first private texts",
        "text/evolution.py",
        (
            (
                _TEXT_POPULATION,
                _TEXT_POPULATION
                + "        own = population.random_api.examples\n"
                + "        if labels is not None and texts is not None and isinstance(own, dict):\n"
                + "            population.random_api.examples = {\n"
                + "                k: [t for t, y in zip(texts, labels) if y == k][:2] or v\n"
                + "                for k, v in own.items()\n"
                + "            }\n",
            ),
        ),
        (
            "labelled text pe base model/add_remove",
            "labelled text pe base model/replace",
            "cli synth-text labels base model/add_remove",
        ),
    ),
    Plant(
        "a label's rewrites show its first private texts as examples",
        "text/evolution.py",
        (
            (
                _TEXT_POPULATION,
                _TEXT_POPULATION
                + "        own = population.variation_api.examples\n"
                + "        if labels is not None and texts is not None and isinstance(own, dict):\n"
                + "            population.variation_api.examples = {\n"
                + "                k: [t for t, y in zip(texts, labels) if y == k][-2:] or v\n"
                + "                for k, v in own.items()\n"
                + "            }\n",
            ),
        ),
        ("labelled text pe base model/add_remove", "cli synth-text labels base model/add_remove"),
    ),
    Plant(
        "sensitivity: a private text of the last label votes twice",
        "text/labels.py",
        (
            (
                "    return np.hstack([points, label_block(labels, names, scale)])\n",
                "    out = np.hstack([points, label_block(labels, names, scale)])\n"
                "    return np.vstack([out, out[[str(x) == str(names[-1]) for x in labels]]])\n",
            ),
        ),
        ("labelled text pe/add_remove",),
    ),
    Plant(
        "a release bypasses the sensitivity seam with a doubled statistic",
        "private/release.py",
        (
            (
                _NOISY_STAT + "    noisy = release_noise(values, sigma, rng, noise, granularity)\n",
                _NOISY_STAT
                + "    noisy = release_noise(values * 2, sigma, rng, noise, granularity)\n",
            ),
        ),
        ("baseline fastlloyd/add_remove",),
    ),
    Plant(
        "a dtype copied from the private frame",
        "tabular/estimator.py",
        (
            (_TAB_FIT, _TAB_FIT + '        self._dtypes = dict(getattr(df, "dtypes", {}))\n'),
            (
                _TAB_SAMPLE,
                "        out = decode_codes(codes, self.metadata_)\n"
                "        for name, kind in getattr(self, '_dtypes', {}).items():\n"
                "            if name in out and kind != object:\n"
                "                out[name] = out[name].astype(kind, errors='ignore')\n"
                "        return out\n",
            ),
        ),
        ("tabular memory/add_remove",),
    ),
    Plant(
        "a size-dependent decision from the exact n",
        "kmeans/rounds.py",
        (
            (
                "k, L = cfg.k, population(est.population, cfg, n_hat)",
                "k, L = cfg.k, population(est.population, cfg, float(len(Z)))",
            ),
        ),
        ("dpkmeans/add_remove",),
    ),
    Plant(
        "a per-row encoding that depends on other rows (centred at the private mean)",
        "private/domain.py",
        (
            (
                _CLIP_OFFSETS,
                "    center = np.mean(np.asarray(X, dtype=np.float64), axis=0)\n" + _CLIP_OFFSETS,
            ),
        ),
        ("dpkmeans/add_remove",),
    ),
    Plant(
        "a timing line on stderr",
        "evolution.py",
        (
            (
                _PE_FINISH,
                "        import sys, time\n\n"
                "        print(f'finished in {time.process_time():.6f} s', file=sys.stderr)\n"
                + _PE_FINISH,
            ),
        ),
        ("cli synth csv/add_remove",),
    ),
    Plant(
        "the seed in the report",
        "evolution.py",
        ((_PE_PUBLIC, _PE_PUBLIC + '            "seed": repr(self.random_state),\n'),),
        ("pe gape/add_remove",),
    ),
    Plant(
        "the seed in a warning",
        "kmeans/estimator.py",
        (
            (
                _KM_OUTPUTS,
                _KM_OUTPUTS
                + "        import warnings\n\n"
                + "        warnings.warn(f'seeded with {self.random_state}')\n",
            ),
        ),
        ("cli kmeans --json/add_remove",),
    ),
    Plant(
        "sensitivity: cluster counts declared at half",
        "private/release.py",
        (
            (
                "            vote_sensitivity(adjacency),\n            rng,\n",
                "            0.5 * vote_sensitivity(adjacency),\n            rng,\n",
            ),
        ),
        ("dpkmeans/add_remove",),
    ),
    Plant(
        "sensitivity: the second moment declared at half",
        "private/release.py",
        (
            (
                "    sensitivity = radius**2 * vote_sensitivity(adjacency)\n",
                "    sensitivity = 0.5 * radius**2 * vote_sensitivity(adjacency)\n",
            ),
        ),
        ("dpkmeans hdpe/add_remove",),
    ),
    Plant(
        "sensitivity: the streamed recover offsets summed unclipped",
        "private/kmeans_stats.py",
        (
            (
                "sums += onehot @ blocks.clipped_rows(rows, 0, len(z), radius)",
                "sums += onehot @ np.asarray(rows, dtype=np.float64)",
            ),
        ),
        ("dpkmeans parquet folder/add_remove",),
    ),
    Plant(
        "sensitivity: a block served from the mapped-block cache repeats its last row",
        "private/kmeans_stats.py",
        (
            (
                "        block = self._blocks.get(index)\n",
                "        block = self._blocks.get(index)\n"
                "        if block is not None:\n"
                "            return np.concatenate([block, block[-1:]])\n",
            ),
        ),
        ("dpkmeans parquet folder/add_remove",),
    ),
    Plant(
        "sensitivity: the tabular marginals counted twice",
        "private/tables.py",
        (
            (
                "    exact = _summed_counts(cells, sizes)\n",
                "    exact = [2 * c for c in _summed_counts(cells, sizes)]\n",
            ),
        ),
        ("tabular parquet folder/add_remove",),
    ),
    Plant(
        "sensitivity: every row counted twice in the target's 2-way tables",
        "tabular/measure.py",
        (
            (
                '            "target_marginals", codes, pair_cells, sizes, star, sigma, plan,'
                " rng\n",
                '            "target_marginals", codes, lambda b: np.vstack([pair_cells(b)] * 2),'
                " sizes, star, sigma, plan, rng\n",
            ),
        ),
        ("tabular target/add_remove",),
    ),
    Plant(
        "sensitivity: pair scores declared at half",
        "private/tables.py",
        (
            (
                "    sensitivity = histogram_l1_sensitivity(adjacency)  # one score per pair",
                "    sensitivity = 0.5 * histogram_l1_sensitivity(adjacency)  # one score per pair",
            ),
        ),
        ("tabular dask/add_remove",),
    ),
    Plant(
        "sensitivity: DPLloyd's counts declared for add/remove under replace",
        "private/statistics.py",
        (
            (
                "    count_sensitivity = histogram_l1_sensitivity(adjacency)\n",
                "    count_sensitivity = 1.0\n",
            ),
        ),
        ("baseline dplloyd/replace",),
    ),
    Plant(
        "sensitivity: FastLloyd's sums declared for add/remove under replace",
        "private/statistics.py",
        (
            (
                '    sum_sensitivity = cluster_sums_sensitivity(max_dist, adjacency, "gaussian"',
                '    sum_sensitivity = cluster_sums_sensitivity(max_dist, "add_remove", "gaussian"',
            ),
        ),
        ("baseline fastlloyd/replace",),
    ),
    Plant(
        "a partitioned folder's part count in a warning",
        "private/frames.py",
        (
            (
                "            self.parts = partitioned_parts(path)\n",
                "            self.parts = partitioned_parts(path)\n"
                "            import warnings\n\n"
                "            warnings.warn(f'{len(self.parts)} partitions')\n",
            ),
        ),
        ("tabular parquet partitioned/add_remove",),
    ),
    Plant(
        "a dropped column's cells in a warning (synth-table --drop)",
        "private/frames.py",
        (
            (
                "            yield offset, frame[self.columns]\n",
                "            import warnings\n\n"
                "            left = frame.drop(columns=self.columns)\n"
                "            warnings.warn(f'dropped: {left.astype(str).sum().tolist()}')\n"
                "            yield offset, frame[self.columns]\n",
            ),
        ),
        ("cli synth-table parquet --drop/add_remove",),
    ),
    Plant(
        "the adaptive choice's L1 distances doubled (sensitivity 2 stated as 1)",
        "private/tables.py",
        (
            (
                "                np.abs(j - np.ravel(e)).sum() - float(p)\n",
                "                2 * np.abs(j - np.ravel(e)).sum() - float(p)\n",
            ),
        ),
        ("tabular adaptive/add_remove",),
    ),
    Plant(
        "post-processing: 'may be empty' columns raked to their exact shares",
        "tabular/estimator.py",
        (
            (
                "        marginals = without_empty(marginals, metadata)  # 'may be empty':"
                " post-processing\n",
                "        marginals = without_empty(marginals, metadata)\n"
                "        from .marginals import cells_of as _cells\n"
                "        _x = _cells(encode_block(rows.in_memory(), metadata),"
                " embedding, self.bins)\n"
                "        marginals['targets'] = [\n"
                "            np.bincount(_x[:, j], minlength=len(t)) / len(_x)"
                " if s.may_be_empty else t\n"
                "            for j, (s, t) in"
                " enumerate(zip(metadata.columns, marginals['targets']))\n"
                "        ]\n",
            ),
        ),
        ("tabular structure/add_remove",),
    ),
    Plant(
        "post-processing: the pool grown for the private row count",
        "tabular/estimator.py",
        (
            (_TAB_FIT, _TAB_FIT + "        self._private_rows = len(df)\n"),
            (
                "            self.metadata_.n_rows or self.n_synthetic_,"
                "  # public: what a user draws by default\n",
                "            20 * self._private_rows,\n",
            ),
        ),
        ("tabular pool growth/add_remove",),
    ),
    Plant(
        "the adaptive rounds after a target's tables one fewer for an odd private row count",
        "tabular/measure.py",
        (
            (
                "    rounds = len(binnings) - (star is not None)\n",
                "    rounds = len(binnings) - (star is not None)\n"
                "    rounds -= star is not None and codes.shape[0] % 2\n",
            ),
        ),
        ("tabular adaptive target/add_remove",),
    ),
)
