"""Built-in sample messages used by ``p2pspam demo`` and the self-test: a spam campaign
(an original and edited copies) and legitimate mail. Written for this project."""

from __future__ import annotations

_SPAM_BODY = """\
Dear {name},

Congratulations! Your email address has been selected in our annual international
customer loyalty draw and you have won a cash prize of {amount} US dollars. To claim
your winnings you must contact our claims agent within fourteen days of receiving this
notice, quoting your reference number {ref}. Please send your full name, postal address,
telephone number and a copy of a valid identity document so that we can release the
funds to your account without delay.

Due to the mix up of some numbers and names, we ask that you keep this award strictly
confidential until your claim has been processed and the money remitted to you. This is
part of our security protocol to avoid double claiming and unwarranted abuse of this
programme by some unscrupulous elements.

Our claims office is open from Monday to Friday. Do not reply to this address; write to
the claims agent directly at the address below and include your reference number.

Yours faithfully,
Mrs. Helen Roberts, Lottery Coordinator
International Promotions Award Department
"""

SPAM_ORIGINAL = (
    "From: Promotions Award <awards@prize-center.example>\n"
    "To: alice@example.org\n"
    "Subject: Final notice: claim your prize\n"
    "Content-Type: text/plain; charset=utf-8\n\n"
    + _SPAM_BODY.format(name="Alice", amount="850,000", ref="XJ-4471-ZT")
)

# A mail-merge copy: another name, amount and reference number.
SPAM_MERGED = (
    "From: Award Team <claims@lucky-draw.example>\n"
    "To: bob@example.org\n"
    "Subject: Your winnings are waiting\n"
    "Content-Type: text/plain; charset=utf-8\n\n"
    + _SPAM_BODY.format(name="Robert", amount="1,200,000", ref="QP-9020-LM")
)

# An HTML copy with an inserted sentence and comment-obfuscated words.
SPAM_HTML = (
    "From: Lottery Office <office@win-now.example>\n"
    "To: carol@example.org\n"
    "Subject: Re: claim\n"
    "MIME-Version: 1.0\n"
    "Content-Type: text/html; charset=utf-8\n\n"
    "<html><body><p>"
    + _SPAM_BODY.format(name="Carol", amount="975,000", ref="MB-1189-RA")
    .replace("Congratulations!", "Con<!-- x -->gratu<b></b>lations!")
    .replace("\n\n", "</p><p>This offer is verified by our auditors. ", 1)
    .replace("\n\n", "</p><p>")
    + "</p></body></html>"
)

HAM_MEETING = """\
From: Dana Whitfield <dana@example.org>
To: team@example.org
Subject: Thursday planning meeting moved

Hi all,

The planning meeting moves from Thursday morning to Friday at two in the small seminar
room, because the projector in the usual room is being repaired. Please bring the figures
for the third quarter and your list of open issues for the storage migration, so that we
can decide which of them block the release and which can wait for the next cycle.

Thanks, and see you there,
Dana
"""

HAM_RECEIPT = """\
From: Bookshop <orders@bookshop.example>
To: alice@example.org
Subject: Your order has shipped
Content-Type: text/plain; charset=utf-8

Hello Alice, your order of two paperbacks (Middlemarch; The Remains of the Day) left our
warehouse this afternoon and should arrive within three working days. You can follow the
parcel with the tracking number printed on your receipt. Thank you for shopping with us.
"""

DEMO_MESSAGES: list[tuple[str, str, bytes]] = [
    ("spam: original", "spam", SPAM_ORIGINAL.encode()),
    ("spam: mail-merge copy", "spam", SPAM_MERGED.encode()),
    ("spam: HTML copy, obfuscated", "spam", SPAM_HTML.encode()),
    ("ham: meeting", "ham", HAM_MEETING.encode()),
    ("ham: receipt", "ham", HAM_RECEIPT.encode()),
]
