"""The Appendix A model: its equations, and agreement with a simulation of its own
assumptions (uniform random checksums, top-N selection)."""

import numpy as np
import pytest

from simulations import ata_model


def test_hypergeometric_probabilities_sum_to_one():
    assert ata_model.hypergeom_pmf(975, 59, 10).sum() == pytest.approx(1.0)


def test_max_of_two_variables_sums_to_one():
    px = ata_model.hypergeom_pmf(975, 59, 10)
    py = ata_model.hypergeom_pmf(975, 99, 10)
    assert ata_model.z_pmf(px, py).sum() == pytest.approx(1.0)


def test_nothing_changed_means_every_feature_survives():
    assert np.allclose(ata_model.survival(975, 0, 0), 1.0)


def test_survival_is_nonincreasing_in_thres():
    s = ata_model.survival(975, 99, 99)
    assert np.all(np.diff(s) <= 1e-12) and 0 <= s.min() <= s.max() <= 1


def test_operation_sizes_follow_the_paper():
    assert ata_model.update_sizes(50, 10) == (59, 59)
    assert ata_model.insert_sizes(50, 10) == (49, 59)
    assert ata_model.delete_sizes(50, 10) == (59, 49)


def test_expected_union_of_one_interior_update_is_l_minus_1_plus_d_in_a_long_document():
    assert ata_model.expected_union_size(10**6, 50, 10, 1) == pytest.approx(59, rel=1e-3)


def test_touched_windows_counts_overlaps_once():
    assert ata_model.touched_windows(1000, 50, [(100, 110)]) == 59
    assert ata_model.touched_windows(1000, 50, [(100, 110), (105, 115)]) == 64
    assert ata_model.touched_windows(1000, 50, [(0, 10)]) == 10


def test_model_matches_simulated_random_checksums():
    rng = np.random.default_rng(1)
    a, x, n, trials = 975, 59, 10, 20000
    hits = np.zeros(n + 1)
    for _ in range(trials):
        kept = rng.random(a - x)
        old = np.concatenate([kept, rng.random(x)])  # the last x are destroyed
        new = np.concatenate([kept, rng.random(x)])  # replaced by x fresh ones
        top_old = set(np.argsort(old)[-n:].tolist())
        top_new = set(np.argsort(new)[-n:].tolist())
        hits[len({i for i in top_old & top_new if i < a - x})] += 1
    measured = np.cumsum(hits[::-1])[::-1][1:] / trials  # P(>= k), k = 1..n
    assert np.max(np.abs(measured - ata_model.survival(a, x, x, n))) < 0.02
