"""Normalisation defences: quotes, signatures and footers are dropped; content is kept."""

from __future__ import annotations

from p2pspam.defences.body import defended_body
from p2pspam.defences.strip import NO_STRIP, StripOptions, strip_boilerplate
from p2pspam.fingerprint.normalize import body_parts, canonical_body, canonical_text

OWN = (
    "Thanks for the notes on the pruning schedule, I will bring the ladder and the\n"
    "long shears to the allotment on Saturday morning."
)
MAILMAN = (
    "_______________________________________________\n"
    "Gardening mailing list\n"
    "Gardening@lists.example.org\n"
    "https://lists.example.org/mailman/listinfo/gardening"
)
SPONSOR = (
    "------------------------ Sponsor ---------------------~-->\n"
    "Cheap seeds and bulbs for every season, delivered.\n"
    "---------------------------------------------------------------------~->"
)
ALL = StripOptions()


def test_mailman_footer_is_dropped() -> None:
    assert strip_boilerplate(f"{OWN}\n\n{MAILMAN}\n", ALL) == OWN


def test_sponsor_banner_above_a_list_footer_is_dropped() -> None:
    assert strip_boilerplate(f"{OWN}\n\n{SPONSOR}\n\n{MAILMAN}", ALL) == OWN


def test_trailing_paragraph_with_unsubscribe_text_is_dropped() -> None:
    footer = "To unsubscribe from this list or update your preferences, visit our site."
    assert strip_boilerplate(f"{OWN}\n\n{footer}", ALL) == OWN


def test_long_trailing_paragraph_is_kept_even_with_a_footer_word() -> None:
    long = "\n".join(["we talked about the subscription to the seed club"] * 14)
    assert strip_boilerplate(f"{OWN}\n\n{long}", ALL).endswith(long)


def test_signature_after_dash_dash_space_is_dropped() -> None:
    text = f"{OWN}\n\n-- \nAnna Walker\nAllotment 14, Tel. 555 0101"
    assert strip_boilerplate(text, ALL) == OWN


def test_quoted_reply_and_its_attribution_are_dropped() -> None:
    quoted = "On Mon, 2 Mar 2026, Bob <bob@example.org> wrote:\n> Shall we prune the\n> roses?"
    assert strip_boilerplate(f"{OWN}\n\n{quoted}", ALL) == OWN


def test_outlook_original_message_block_is_dropped() -> None:
    text = f"{OWN}\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\n\nShall we prune?"
    assert strip_boilerplate(text, ALL) == OWN


def test_a_message_that_is_all_quotation_keeps_its_text() -> None:
    text = "> Buy cheap watches today at our online store, free delivery\n> on every order."
    assert strip_boilerplate(text, ALL) == text


def test_disabled_rules_leave_text_untouched() -> None:
    text = f"{OWN}\n\n-- \nsig\n\n{MAILMAN}"
    assert strip_boilerplate(text, NO_STRIP) == text
    assert strip_boilerplate(text, StripOptions(quotes=False, signatures=False)) == (
        f"{OWN}\n\n-- \nsig"
    )


def _mail(body: str, ctype: str = "text/plain") -> bytes:
    head = f"From: a@example.org\nTo: b@example.org\nSubject: x\nContent-Type: {ctype}\n\n"
    return (head + body).encode()


def test_defended_body_strips_the_footer_of_a_raw_message() -> None:
    body = defended_body(_mail(f"{OWN}\n\n{MAILMAN}\n"), ALL)
    assert body.text == canonical_text(OWN)


def test_html_footer_blocks_are_recognised() -> None:
    html = f"<html><body><p>{OWN}</p><p>You are receiving this because you opted in. "
    html += "Unsubscribe here.</p></body></html>"
    assert defended_body(_mail(html, "text/html"), ALL).text == canonical_text(OWN)


def test_walk_without_rules_equals_canonical_body() -> None:
    html = f"<html><body><p>{OWN}</p><br><div>two</div></body></html>"
    for raw in (_mail(f"{OWN}\n\n{MAILMAN}"), _mail(html, "text/html")):
        assert canonical_text("\n".join(body_parts(raw))) == canonical_body(raw).text
        assert defended_body(raw, NO_STRIP) == canonical_body(raw)


CUSTOM = (
    "Posted through the Riverside circle. Meetings every first Tuesday at the library\n"
    "hall, bring your own mug and a plant to swap with the other members."
)


def _list_mail(body: str) -> bytes:
    head = "From: a@example.org\nList-Id: <garden.lists.example.org>\nContent-Type: text/plain\n\n"
    return (head + body).encode()


def test_list_mail_loses_an_unrecognised_trailing_footer() -> None:
    body = defended_body(_list_mail(f"{OWN}\n\n{CUSTOM}\n"), ALL)
    assert body.text == canonical_text(OWN)


def test_the_same_trailing_paragraph_is_kept_without_list_headers() -> None:
    body = defended_body(_mail(f"{OWN}\n\n{CUSTOM}\n"), ALL)
    assert body.text == canonical_text(f"{OWN}\n{CUSTOM}")


def test_list_mail_with_a_recognised_footer_keeps_its_last_paragraph() -> None:
    second = "See you all on Saturday, weather permitting, with the new seed catalogue."
    body = defended_body(_list_mail(f"{OWN}\n\n{second}\n\n{MAILMAN}\n"), ALL)
    assert body.text == canonical_text(f"{OWN}\n\n{second}")
