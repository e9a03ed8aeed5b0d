"""Every experiment at ``--quick`` size: outputs exist and the invariants hold."""

import itertools
from collections import defaultdict
from math import sqrt

import numpy as np
import pytest
from simcorpus import write_corpus
from simrun import run_experiment

from p2pspam.errors import ParameterError
from p2pspam.fingerprint.ata import ata_features_batch
from simulations.common import read_csv
from simulations.experiments import falsepos


def _f(row, key):
    return float(row[key])


# -- robustness (Fig. 7) ------------------------------------------------------------------


def test_robustness_probabilities_are_valid_and_nonincreasing_in_thres(experiment):
    rows = experiment("robustness", "--trials", "200")
    curves = defaultdict(list)
    for r in rows:
        for key in ("measured", "model", "model_exact_xy"):
            assert 0.0 <= _f(r, key) <= 1.0
        curves[(r["size"], r["modification"])].append(r)
    assert len(curves) == 6
    for curve in curves.values():
        for key in ("measured", "model"):
            values = [_f(r, key) for r in sorted(curve, key=lambda r: int(r["thres"]))]
            assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))


def test_robustness_model_agrees_with_measurement_where_its_assumptions_hold(experiment):
    rows = experiment("robustness", "--trials", "1500")
    for r in rows:
        if r["modification"] == "5 words x 5 chars" and r["size"] == "1024":
            continue  # |X|/|A| ~ 24 %: the independence assumption fails (documented)
        n = int(r["interior_trials"])
        p = _f(r, "measured_interior")
        tolerance = 0.03 + 3 * sqrt(max(p * (1 - p), 1e-4) / n)
        assert abs(_f(r, "model_interior") - p) <= tolerance, r


# -- falsepos (Fig. 8) ----------------------------------------------------------------------


def test_falsepos_pipeline_gives_the_shipping_ata_features():
    from simulations.randtext import random_points

    seed = np.random.SeedSequence(9)
    feats = falsepos.batch_features(seed, 5, 1500, 50, 10, (64,))[64]
    points = random_points(np.random.default_rng(seed), (5, 1500))
    texts = [row.tobytes().decode("ascii") for row in points]
    assert [list(map(int, f)) for f in feats] == ata_features_batch(texts)


def test_falsepos_pair_counts_equal_brute_force_at_16_bits():
    seed = np.random.SeedSequence(3)
    feats = falsepos.batch_features(seed, 60, 2048, 50, 10, (16,))[16]
    counts = falsepos.count_pairs(feats)
    brute = defaultdict(int)
    sets = [set(row.tolist()) for row in feats]
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            k = len(sets[i] & sets[j])
            if k:
                brute["1" if k == 1 else "2" if k == 2 else ">2"] += 1
    assert counts == {"1": brute["1"], "2": brute["2"], ">2": brute[">2"]}
    assert counts["1"] > 0  # 16-bit checksums collide: the test is not vacuous


def test_falsepos_shares_no_more_than_two_features_and_rates_are_valid(experiment):
    rows = experiment("falsepos", "--workers", "1")
    assert {int(r["size"]) for r in rows} == {1024, 4096}
    for r in rows:
        assert int(r["pairs_gt2"]) == 0
        assert 0.0 <= _f(r, "rate_1") <= 1.0
        assert int(r["pairs"]) == int(r["docs"]) * (int(r["docs"]) - 1) // 2


def test_falsepos_rejects_bad_sizes(tmp_path):
    with pytest.raises(ParameterError):
        run_experiment("falsepos", "--quick", "--sizes", "x", "--out", str(tmp_path))


# -- ttl (Fig. 10) --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttl_rows(tmp_path_factory) -> list[dict[str, str]]:
    out = tmp_path_factory.mktemp("ttl")
    assert run_experiment("ttl", "--quick", "--workers", "1", "--out", str(out)) == 0
    assert (out / "ttl.png").exists()
    return read_csv(out / "ttl.csv")


def _curves(rows):
    curves = defaultdict(dict)
    for r in rows:
        curves[(r["overlay"], r["convention"])][(float(r["mark_rate"]), int(r["ttl"]))] = r
    return curves


def test_ttl_success_is_a_probability(ttl_rows):
    assert {r["overlay"] for r in ttl_rows} == {"tapestry", "kademlia"}
    for r in ttl_rows:
        assert 0.0 <= _f(r, "success") <= 1.0
        assert _f(r, "success_std") >= 0.0


def test_ttl_success_is_nondecreasing_in_ttl(ttl_rows):
    for curve in _curves(ttl_rows).values():
        for (rate, ttl), r in curve.items():
            if (rate, ttl + 1) in curve:
                assert _f(curve[(rate, ttl + 1)], "success") >= _f(r, "success") - 1e-12


def test_ttl_success_is_nondecreasing_in_mark_rate(ttl_rows):
    for curve in _curves(ttl_rows).values():
        rates = sorted({rate for rate, _ in curve})
        for ttl in {t for _, t in curve}:
            values = [_f(curve[(rate, ttl)], "success") for rate in rates]
            assert all(b >= a - 0.02 for a, b in itertools.pairwise(values))


def test_ttl_conventions_differ_by_one_hop(ttl_rows):
    curves = _curves(ttl_rows)
    for overlay in ("tapestry", "kademlia"):
        hops, nodes = curves[(overlay, "hops")], curves[(overlay, "nodes")]
        for (rate, ttl), r in nodes.items():
            if ttl >= 2:
                assert _f(r, "success") == pytest.approx(_f(hops[(rate, ttl - 1)], "success"))


def test_ttl_distance_grows_with_ttl(ttl_rows):
    for curve in _curves(ttl_rows).values():
        reach = [_f(curve[(0.01, t)], "reach_ms") for t in range(1, 9)]
        assert all(b >= a - 1e-9 for a, b in itertools.pairwise(reach))


def test_ttl_unlimited_queries_always_succeed(ttl_rows):
    for r in ttl_rows:
        if r["convention"] == "hops" and int(r["ttl"]) == 8:
            assert _f(r, "success") == pytest.approx(1.0)


# -- corpus (Tables 1, 2) -------------------------------------------------------------------


def test_corpus_finds_the_campaigns_and_the_shared_boilerplate(tmp_path, capsys):
    spam, ham = write_corpus(tmp_path / "mail", campaigns=3, copies=5)
    shared = (spam / "0000.eml").read_text().split("\n\n", 1)[1][:400]
    (ham / "9999.eml").write_text(f"Subject: quoted\n\n{shared}\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["--quick", "--spam", str(spam), "--ham", str(ham), "--out", str(out)]
    assert run_experiment("corpus", *args) == 0
    assert "3 near-duplicate clusters" in capsys.readouterr().out
    t1 = read_csv(out / "corpus_table1.csv")
    for mode in ("vs first", "vs earlier"):
        rates = [_f(r, "success") for r in t1 if r["mode"] == mode]
        assert all(0 <= x <= 1 for x in rates)
        assert all(a >= b for a, b in itertools.pairwise(rates))
        assert all(int(r["total"]) == 12 for r in t1 if r["mode"] == mode)  # 3 x (5 - 1)
    t2 = {r["shared"]: int(r["pairs"]) for r in read_csv(out / "corpus_table2.csv")}
    assert sum(t2.values()) >= 1  # the quoting ham shares features with the campaign


def test_corpus_without_ham_is_a_clear_error(tmp_path):
    spam, _ = write_corpus(tmp_path / "mail", campaigns=1, copies=2, singles=0, ham=0)
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(ParameterError, match="spam and ham"):
        run_experiment("corpus", "--spam", str(spam), "--ham", str(empty), "--out", str(tmp_path))


# -- scale and churn ------------------------------------------------------------------------


def test_scale_rounds_grow_with_network_size(experiment):
    rows = experiment("scale")
    rounds = [_f(r, "rounds_to_record") for r in rows]
    assert rounds[-1] > rounds[0]
    assert all(_f(r, "found_true_closest") >= 0.9 for r in rows)


def test_churn_success_is_valid_and_replication_helps(experiment):
    rows = experiment("churn")
    by = {(r["variant"], float(r["failed"])): _f(r, "success") for r in rows}
    assert all(0.0 <= v <= 1.0 for v in by.values())
    assert all(by[(v, 0.0)] == 1.0 for v in ("1 replica", "8 replicas", "8 replicas + pointers"))
    high = [f for v, f in by if f >= 0.5]
    assert sum(by[("8 replicas", f)] for f in high) >= sum(by[("1 replica", f)] for f in high)


def test_every_experiment_names_the_figure_it_reproduces():
    import importlib

    for name in ("robustness", "falsepos", "ttl", "corpus", "scale", "churn"):
        module = importlib.import_module(f"simulations.experiments.{name}")
        assert module.FIGURE
