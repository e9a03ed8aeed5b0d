"""Network defences and the decision pipeline on targeted cases."""

from __future__ import annotations

from p2pspam.defences.pipeline import (
    AgentDefences,
    Fingerprinter,
    Network,
    NetworkDefences,
    Settings,
    ham_vote_vector,
    window_texts,
)
from p2pspam.defences.strip import NO_STRIP
from p2pspam.fingerprint.normalize import canonical_body_of_text

FOOTER = (
    "this list is hosted by the riverside gardening circle, meetings every first tuesday "
    "at the library hall; bring your own mug and a plant to swap with the other members "
    "and remember that the seed exchange closes at nine in the evening sharp every week. "
    "the committee thanks the volunteers of the orchard group for the new greenhouse roof, "
    "paid from the raffle; minutes of every meeting are pinned on the shed door by friday."
)
SPAM = (
    "buy cheap replica watches today, rolex omega and breitling models in stock now with "
    "swiss movement and sapphire crystal, free express delivery on all orders this week. "
    "impress your friends and colleagues with a premium timepiece at a fraction of the "
    "retail price, satisfaction guaranteed or your money back, order before sunday. "
)
OFF = Settings(
    agent=AgentDefences(strip=NO_STRIP, sketch=False),
    network=NetworkDefences(max_guids=None, ham_guids=None),
)


def _vector(text: str, settings: Settings = OFF):
    return Fingerprinter(settings.agent).vector(canonical_body_of_text(text), "user")


def _ham(i: int) -> str:
    own = " ".join(f"plot{i}word{j}" for j in range(20))
    return f"note {i}: the compost heap needs turning before the frost comes. {own} {FOOTER}"


def test_a_marked_spam_catches_its_near_duplicate() -> None:
    net = Network(OFF)
    net.vote("alice", _vector(SPAM + FOOTER), "spam", 1000)
    copy = _vector(SPAM.replace("today", "right now") + FOOTER)
    assert net.check(copy, 2000).status == "spam"


def test_without_defences_list_ham_sharing_the_footer_is_flagged() -> None:
    net = Network(OFF)
    net.vote("alice", _vector(SPAM + FOOTER), "spam", 1000)
    assert net.check(_vector(_ham(1)), 2000).status == "spam"


def test_ham_vote_discounts_the_shared_features_but_not_the_spam_content() -> None:
    settings = Settings(agent=OFF.agent, network=NetworkDefences(max_guids=None, ham_guids=1))
    net = Network(settings)
    net.vote("alice", _vector(SPAM + FOOTER), "spam", 1000)
    first = _vector(_ham(1))
    flagged = net.check(first, 2000)
    assert flagged.status == "spam"
    text = canonical_body_of_text(_ham(1)).text
    net.vote("bob", ham_vote_vector(first, text, flagged.spam_matches, 50), "ham", 2100)
    second = _vector(_ham(2))
    assert net.check(second, 2500).status == "spam"  # 1 ham voter vs 1 spam voter: a tie
    text = canonical_body_of_text(_ham(2)).text
    rescue = ham_vote_vector(second, text, net.check(second, 2600).spam_matches, 50)
    net.vote("carol", rescue, "ham", 2700)
    later = net.check(_vector(_ham(3)), 3000)
    assert later.status != "spam"
    copy = _vector(SPAM.replace("buy cheap", "get cheap") + FOOTER)
    assert net.check(copy, 4000).status == "spam"


def test_one_users_ham_vote_cannot_switch_off_a_campaign_marked_by_others() -> None:
    settings = Settings(agent=OFF.agent, network=NetworkDefences(max_guids=None, ham_guids=1))
    net = Network(settings)
    net.vote("alice", _vector(SPAM + FOOTER), "spam", 1000)
    net.vote("dave", _vector(SPAM.replace("today", "tonight") + FOOTER), "spam", 1100)
    poison = _vector(SPAM.replace("today", "this week") + FOOTER)
    net.vote("mallory", poison, "ham", 1200)
    copy = _vector(SPAM.replace("buy cheap", "get cheap") + FOOTER)
    assert net.check(copy, 2000).status == "spam"


def _offer(i: int) -> str:
    return f"special offer {i}: " + " ".join(f"deal{i}x{j}" for j in range(30)) + " " + FOOTER


def test_features_held_by_many_guids_are_discounted_and_reported() -> None:
    settings = Settings(agent=OFF.agent, network=NetworkDefences(max_guids=3, ham_guids=None))
    net = Network(settings)
    for i in range(4):  # four different spams through the same list
        net.vote(f"u{i}", _vector(_offer(i)), "spam", 1000 + i)
    assert net.check(_vector(_ham(9)), 5000).status != "spam"
    copy = net.check(_vector(_offer(2)), 5000)  # the spam's own content still matches
    assert copy.status == "spam"
    assert copy.spam_matches[0].discounted_features


def test_the_window_sketch_keeps_a_recurring_footer_out_of_the_features() -> None:
    agent = Fingerprinter(AgentDefences(strip=NO_STRIP, sketch=True, sketch_threshold=3))
    for i in range(3):
        agent.learn(canonical_body_of_text(_ham(i)), "carol")
    body = canonical_body_of_text(_ham(7))
    windows = window_texts(body.text, agent.vector(body, "carol").features, 50)
    assert windows and all(w not in FOOTER for w in windows.values())
    # another user, who never saw the footer, still selects it
    other = window_texts(body.text, agent.vector(body, "dave").features, 50)
    assert any(w in FOOTER for w in other.values())


def test_window_texts_recovers_the_text_of_each_feature() -> None:
    body = canonical_body_of_text(SPAM + FOOTER)
    vector = _vector(SPAM + FOOTER)
    windows = window_texts(body.text, vector.features, 50)
    assert set(windows) == set(vector.features)
    assert all(len(w) == 50 and w in body.text for w in windows.values())


def test_a_vote_excludes_windows_seen_once_in_legitimate_mail() -> None:
    agent = Fingerprinter(AgentDefences(strip=NO_STRIP, sketch=True))
    agent.learn(canonical_body_of_text(_ham(1)), "erin")
    body = canonical_body_of_text(SPAM + FOOTER)
    check = window_texts(body.text, agent.vector(body, "erin").features, 50)
    vote = window_texts(body.text, agent.vector(body, "erin", vote=True).features, 50)
    assert any(w in FOOTER for w in check.values())  # seen once: still checked
    assert vote and not any(w in FOOTER for w in vote.values())  # but never voted on
