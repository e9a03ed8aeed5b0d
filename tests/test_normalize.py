"""Normalisation: from raw RFC 5322 bytes to canonical text."""

import base64

from hypothesis import given
from hypothesis import strategies as st

from p2pspam.fingerprint import canonical_body, canonical_text
from p2pspam.fingerprint.html import html_to_text
from p2pspam.fingerprint.normalize import NOTE_NO_TEXT_BODY


def _msg(headers: str, body: bytes) -> bytes:
    return headers.encode() + b"\n" + body


def test_headers_are_not_part_of_the_body_text():
    raw = _msg("From: x@example.org\nSubject: BUY NOW unique subject\n", b"Body text here.\n")
    assert canonical_body(raw).text == "body text here."


def test_multipart_alternative_takes_plain_text_once():
    raw = _msg(
        'Content-Type: multipart/alternative; boundary="b"\n',
        b"--b\nContent-Type: text/plain\n\nThe offer.\n--b\nContent-Type: text/html\n\n"
        b"<p>The offer in HTML.</p>\n--b--\n",
    )
    assert canonical_body(raw).text == "the offer."


def test_multipart_alternative_falls_back_to_html_when_plain_is_empty():
    raw = _msg(
        'Content-Type: multipart/alternative; boundary="b"\n',
        b"--b\nContent-Type: text/plain\n\n   \n--b\nContent-Type: text/html\n\n"
        b"<p>Only <i>HTML</i> here.</p>\n--b--\n",
    )
    assert canonical_body(raw).text == "only html here."


def test_nested_multipart_collects_every_text_part_in_order():
    raw = _msg(
        'Content-Type: multipart/mixed; boundary="outer"\n',
        b"--outer\nContent-Type: multipart/related; boundary=inner\n\n"
        b"--inner\nContent-Type: text/plain\n\nFirst part.\n--inner--\n"
        b"--outer\nContent-Type: text/plain\n\nSecond part.\n--outer--\n",
    )
    assert canonical_body(raw).text == "first part. second part."


def test_base64_html_is_decoded_and_stripped_of_tags_scripts_and_comments():
    html = b"<html><head><style>b{}</style></head><body>Buy <b>Vi<!-- -->agra</b>"
    html += b"<script>x()</script> at <a href='http://e.example'>our shop</a></body></html>"
    raw = _msg(
        "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n",
        base64.encodebytes(html),
    )
    assert canonical_body(raw).text == "buy viagra at our shop"


def test_quoted_printable_with_declared_charset_is_decoded():
    raw = _msg(
        "Content-Type: text/plain; charset=iso-8859-1\n"
        "Content-Transfer-Encoding: quoted-printable\n",
        b"Caf=E9 cr=E8me\n",
    )
    assert canonical_body(raw).text == "café crème"


def test_unknown_charset_falls_back_without_raising():
    raw = _msg("Content-Type: text/plain; charset=klingon-8\n", b"caf\xc3\xa9 ok\n")
    assert canonical_body(raw).text == "café ok"


def test_wrong_charset_bytes_become_replacement_characters():
    raw = _msg("Content-Type: text/plain; charset=utf-8\n", b"bad \xff\xfe bytes\n")
    assert canonical_body(raw).text == "bad \ufffd\ufffd bytes"


def test_missing_charset_with_8bit_latin_bytes_reads_as_windows_1252():
    raw = _msg("Content-Type: text/plain\n", b"price \x80 5\n")
    assert canonical_body(raw).text == "price € 5"


def test_attachments_are_skipped():
    raw = _msg(
        'Content-Type: multipart/mixed; boundary="b"\n',
        b"--b\nContent-Type: text/plain\n\nBody.\n--b\nContent-Type: text/plain\n"
        b"Content-Disposition: attachment; filename=a.txt\n\nAttached text.\n--b--\n",
    )
    assert canonical_body(raw).text == "body."


def test_forwarded_message_body_is_included():
    raw = _msg(
        'Content-Type: multipart/mixed; boundary="b"\n',
        b"--b\nContent-Type: text/plain\n\nSee below.\n--b\nContent-Type: message/rfc822\n\n"
        b"Subject: inner\n\nInner body.\n--b--\n",
    )
    assert canonical_body(raw).text == "see below. inner body."


def test_empty_body_is_reported_as_no_text_body():
    body = canonical_body(b"Subject: nothing\n\n")
    assert (body.text, body.note) == ("", NOTE_NO_TEXT_BODY)


def test_message_with_only_an_image_is_reported_as_no_text_body():
    raw = _msg("Content-Type: image/png\nContent-Transfer-Encoding: base64\n", b"iVBORw0K\n")
    assert canonical_body(raw).note == NOTE_NO_TEXT_BODY


def test_huge_single_line_is_normalised():
    line = b"spam " * 400_000  # a 2 MB line without a line break
    body = canonical_body(_msg("Content-Type: text/plain\n", line))
    assert len(body.text) == len(line) - 1


def test_truncated_multipart_still_yields_the_text_that_is_there():
    raw = _msg(
        'Content-Type: multipart/mixed; boundary="b"\n',
        b"--b\nContent-Type: text/plain\n\nThe start of a message that was cut",
    )
    assert canonical_body(raw).text == "the start of a message that was cut"


def test_plain_text_without_headers_is_its_own_body():
    assert canonical_body(b"just some words\nover two lines").text.endswith("over two lines")


def test_html_blocks_are_separated_by_whitespace():
    assert html_to_text("<p>one</p><p>two</p><div>three<br>four</div>").split() == [
        "one",
        "two",
        "three",
        "four",
    ]


def test_canonical_text_folds_case_whitespace_and_invisible_characters():
    assert canonical_text("  Hello\u200b\tWORLD \n\n Stra\u00dfe ") == "hello world strasse"


def test_canonical_text_applies_nfkc():
    assert canonical_text("\ufb01ne \uff21") == "fine a"  # ligature and full-width letter


@given(st.binary(max_size=4000))
def test_any_bytes_normalise_without_raising(raw):
    body = canonical_body(raw)
    assert isinstance(body.text, str)
    assert (body.note is None) == bool(body.text)


@given(st.text(max_size=300))
def test_canonical_text_is_idempotent(text):
    once = canonical_text(text)
    assert canonical_text(once) == once
