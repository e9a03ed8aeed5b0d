"""Vector shapes: a vote's vector must be what its claimed scheme could have produced."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2pspam.auth.shapes import known_schemes, shape_error
from p2pspam.auth.votes import MAX_FEATURES, MAX_VOTE_BYTES
from p2pspam.fingerprint import get_scheme
from p2pspam.fingerprint.normalize import CanonicalBody, canonical_text

from .helpers import SPAM_TEXT

LONG_TEXT = " ".join([SPAM_TEXT] * 12)


def vector(name: str, **params: object):
    scheme = get_scheme(name, **params)
    return scheme.vector(CanonicalBody(canonical_text(LONG_TEXT), None))


@pytest.mark.parametrize("name", ["ata", "winnow", "imatch", "lsh"])
def test_every_network_scheme_vector_fits_its_shape(name):
    v = vector(name)
    assert v.features, v.note
    assert shape_error(v.scheme, v.namespace, v.params, v.features) is None


@pytest.mark.parametrize("name", ["ata", "winnow", "imatch", "lsh"])
def test_a_namespace_from_other_parameters_does_not_fit(name):
    v = vector(name)
    wrong = v.namespace + "x"
    assert "namespace" in shape_error(v.scheme, wrong, v.params, v.features)


def test_a_winnow_vector_longer_than_n_does_not_fit():
    v = vector("winnow")
    params = dict(v.params)
    too_many = tuple(range(1, params["N"] + 2))
    assert "at most" in shape_error("winnow", v.namespace, params, too_many)


def test_an_imatch_vector_has_at_most_k_plus_one_signatures():
    v = vector("imatch")
    k = v.params["K"]
    assert shape_error("imatch", v.namespace, v.params, tuple(range(1, k + 2))) is None
    assert "at most" in shape_error("imatch", v.namespace, v.params, tuple(range(1, k + 3)))


def test_parameters_of_another_scheme_do_not_fit():
    v = vector("ata")
    assert "takes parameters" in shape_error("winnow", v.namespace, v.params, v.features)


def test_parameters_out_of_the_schemes_range_do_not_fit():
    v = replace(vector("winnow"), params={"w": 0, "N": 16})
    assert "out of range" in shape_error("winnow", v.namespace, v.params, v.features)


def test_the_known_schemes_are_the_network_schemes():
    assert {"ata", "winnow", "imatch", "lsh"} <= set(known_schemes())


def test_vote_limits_match_what_an_object_record_carries():
    from p2pspam.adolr import records

    assert records.MAX_VOTE_BYTES == MAX_VOTE_BYTES
    assert records.MAX_FEATURES == MAX_FEATURES
