"""The agent-side boilerplate defences on real mail, through real peers on loopback: the
defended body, the user's window sketch (``agent learn``), and ham votes on the
boilerplate a rescued message shares with the spam it matched."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from agenthelpers import REPO, run_agent

from agent.config import load_config
from agent.localpeers import LocalWorld

WORDS = [
    "river", "stone", "lantern", "orchard", "copper", "meadow", "harbor", "violet",
    "thunder", "pepper", "canyon", "velvet", "marble", "falcon", "willow", "ember",
    "glacier", "saffron", "timber", "cobalt", "meadowlark", "quartz", "juniper",
    "beacon", "summit", "hollow", "prairie", "cinder",
]  # fmt: skip


def words(rng: random.Random, n: int) -> str:
    """``n`` words of plain text (no footer phrase any normalisation rule knows)."""
    return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(n))


def mail(subject: str, body: str) -> bytes:
    return f"From: someone@example.net\nSubject: {subject}\n\n{body}\n".encode()


class ListMail:
    """A mailing list whose footer is plain words (no rule can recognise it as a
    footer: only the window sketch can), a spam posted to it, and its legitimate posts."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)
        self.footer = words(self.rng, 150)
        self.spam_text = words(self.rng, 150)

    def spam(self, edit: str = "") -> bytes:
        return mail("offer", f"{self.spam_text} {edit}\n\n{self.footer}")

    def post(self, own_words: int = 20) -> bytes:
        return mail("list post", f"{words(self.rng, own_words)}\n\n{self.footer}")


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def check(config: Path, path: str) -> dict:
    result = run_agent("check", "--json", "--config", str(config), path)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_list_mail_sharing_a_marked_spams_footer_is_not_flagged_after_learn(
    world: LocalWorld, tmp_path: Path
) -> None:
    lists = ListMail("c")  # a seed whose post shares 5 of 10 features with the spam
    marker, reader, newcomer = (world.add_user(f"{u}-{tmp_path.name}") for u in "abc")
    assert (
        run_agent("mark", "--config", str(marker), write(tmp_path / "s", lists.spam())).returncode
        == 0
    )
    kept = tmp_path / "kept"
    kept.mkdir()
    for i in range(3):
        write(kept / f"{i}.eml", lists.post())
    learned = run_agent("learn", "--config", str(reader), str(kept))
    assert learned.returncode == 0, learned.stderr
    assert b"3 of 3 message(s) learned" in learned.stdout
    post = write(tmp_path / "post", lists.post())
    row = check(newcomer, post)
    assert row["verdict"] == "spam", row  # without the sketch: a false positive
    assert check(reader, post)["verdict"] == "clean"
    edited = write(tmp_path / "edited", lists.spam("one more line of spam text"))
    assert check(reader, edited)["verdict"] == "spam"  # the spam's own text still matches


def test_the_sketch_excludes_the_windows_of_learned_mail(world: LocalWorld, tmp_path: Path) -> None:
    from agent.checking import build_schemes, fingerprint
    from agent.defences import learn_messages, load_exclusions

    lists = ListMail("sketch")
    config = load_config(world.add_user(f"sketch-{tmp_path.name}"))
    schemes = build_schemes(config)
    post = lists.post()
    before = fingerprint([post], schemes, config.defences, load_exclusions(config))[0][0]
    assert learn_messages(config, [lists.post(), lists.post()]) == 2
    after = fingerprint([post], schemes, config.defences, load_exclusions(config))[0][0]
    footer = fingerprint([mail("f", lists.footer)], schemes, config.defences)[0][0]
    assert set(before.features) & set(footer.features)
    assert not set(after.features) & set(footer.features)
    assert after.guid == before.guid and len(after.features) == len(before.features)


def test_the_sketch_file_holds_counters_only(world: LocalWorld, tmp_path: Path) -> None:
    from agent.defences import learn_messages, sketch_path

    config = load_config(world.add_user(f"counters-{tmp_path.name}"))
    secret = b"zanzibar-secret-phrase"
    learn_messages(config, [mail("x", "words " * 40 + secret.decode())])
    data = sketch_path(config).read_bytes()
    assert secret not in data
    assert len(data) == config.defences.sketch_bytes


async def test_unmark_publishes_the_ham_vote_vector(world: LocalWorld, tmp_path: Path) -> None:
    from agent.checking import build_schemes, fingerprint
    from agent.defences import bodies
    from agent.runtime import load_user, make_client, now_ms
    from agent.voting import publish_votes
    from p2pspam.adolr.query import Match
    from p2pspam.auth.votes import decode_vote
    from p2pspam.defences.pipeline import ham_vote_vector

    lists = ListMail("u2")  # a seed whose post lacks 2 of the shared windows in its top 10
    marker = load_config(world.add_user(f"um-a-{tmp_path.name}"))
    rescuer = load_config(world.add_user(f"um-b-{tmp_path.name}"))
    schemes = build_schemes(marker)
    spam, post = lists.spam(), lists.post(90)
    spam_vector = fingerprint([spam], schemes, marker.defences)[0][0]
    own = fingerprint([post], schemes, rescuer.defences)[0][0]
    published: list[bytes] = []

    class Recorder:
        """The real client, with the votes it publishes kept for inspection."""

        def __init__(self, client: object) -> None:
            self.client = client

        async def call(self, op: str, args: dict) -> object:
            if op == "publish":
                published.append(args["vote"])
            return await self.client.call(op, args)

    async with make_client(marker) as client:
        await publish_votes(client, load_user(marker), schemes, ["s"], [spam], "spam", now_ms())
    async with make_client(rescuer) as client:
        summary = await publish_votes(
            Recorder(client), load_user(rescuer), schemes, ["p"], [post], "ham", now_ms()
        )
    assert summary.published == 1 and summary.rescued == 1
    vote = decode_vote(published[0])
    text = bodies([post], rescuer.defences)[0].text
    match = Match(spam_vector.guid, 0, (), (), spam_vector.namespace, spam_vector.features)
    expected = ham_vote_vector(own, text, [match], 50)
    assert vote.verdict == "ham" and vote.guid == own.guid
    # the peer may list the spam's features in another order: the same set is voted on
    assert set(vote.features) == set(expected.features) != set(own.features)


def test_unmark_learns_the_rescued_message(world: LocalWorld, tmp_path: Path) -> None:
    from agent.defences import sketch_path

    config = world.add_user(f"unmark-learn-{tmp_path.name}")
    post = write(tmp_path / "p", ListMail(tmp_path.name).post())
    result = run_agent("unmark", "--config", str(config), post)
    assert result.returncode == 0, result.stderr
    assert b"1 message(s) learned" in result.stdout
    assert sketch_path(load_config(config)).exists()


def test_filter_with_a_learned_sketch_does_not_import_numpy(
    world: LocalWorld, tmp_path: Path
) -> None:
    from agent.defences import learn_messages

    lists = ListMail(f"filter-{tmp_path.name}")
    config_path = world.add_user(f"filter-{tmp_path.name}")
    learn_messages(load_config(config_path), [lists.post(), lists.post()])
    code = (
        "import sys\n"
        "from agent.commands.filter import filter_bytes\n"
        "out = filter_bytes(sys.stdin.buffer.read(), sys.argv[1])\n"
        "assert b'X-P2PSpam-Status: No' in out, out[:300]\n"
        "print('numpy' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(config_path)],
        input=lists.post(),
        capture_output=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == b"False"


def test_a_corrupt_sketch_file_leaves_the_filter_in_safe_mode(
    world: LocalWorld, tmp_path: Path
) -> None:
    from agent.defences import sketch_path

    config_path = world.add_user(f"corrupt-{tmp_path.name}")
    path = sketch_path(load_config(config_path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"p2pspam/window-sketch/1\0" + b"\xff" * 100)
    message = ListMail(tmp_path.name).post()
    result = run_agent("filter", "--config", str(config_path), input=message)
    assert result.returncode == 0
    assert result.stdout.endswith(message)
    assert b"X-P2PSpam-Status: Unknown (window sketch" in result.stdout


def test_learn_with_the_sketch_disabled_is_a_one_line_error(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = world.add_user(f"nosketch-{tmp_path.name}")
    with config.open("a") as handle:
        handle.write("\n[agent.defences]\nsketch = false\n")
    result = run_agent("learn", "--config", str(config), write(tmp_path / "m", mail("x", "y")))
    assert result.returncode == 2
    assert result.stderr.count(b"\n") == 1 and b"sketch" in result.stderr


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ("sketch = 1", "true or false"),
        ("sketch_threshold = 0", "sketch_threshold"),
        ("sketch_width_bits = 30", "sketch_width_bits"),
        ("colour = 1", r"unknown \[agent.defences\] keys"),
    ],
)
def test_bad_defence_settings_are_refused(tmp_path: Path, table: str, fragment: str) -> None:
    from p2pspam.errors import ParameterError

    path = tmp_path / "agent.toml"
    path.write_text(f"[agent.defences]\n{table}\n")
    with pytest.raises(ParameterError, match=fragment):
        load_config(path)


def test_config_show_prints_the_defences(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text('[agent.defences]\nfooters = false\nsketch_file = "s.bin"\n')
    result = run_agent("config", "show", "--json", "--config", str(path))
    shown = json.loads(result.stdout)["defences"]
    assert shown["footers"] is False and shown["quotes"] is True
    assert shown["sketch_file"] == str(tmp_path / "s.bin")
    assert shown["sketch_threshold"] == 2 and shown["vote_sketch_threshold"] == 1
    toml = run_agent("config", "show", "--config", str(path)).stdout.decode()
    again = load_config(_written(tmp_path / "again.toml", toml))
    assert again.defences == load_config(path).defences


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_learn_into_an_unusable_sketch_path_is_a_one_line_error(
    world: LocalWorld, tmp_path: Path
) -> None:
    config = world.add_user(f"badpath-{tmp_path.name}")
    (tmp_path / "dir.bin").mkdir()
    with config.open("a") as handle:
        handle.write(f'\n[agent.defences]\nsketch_file = "{tmp_path / "dir.bin"}"\n')
    result = run_agent("learn", "--config", str(config), write(tmp_path / "m", mail("x", "y" * 80)))
    assert result.returncode == 2
    assert result.stderr.count(b"\n") == 1 and b"window sketch" in result.stderr
