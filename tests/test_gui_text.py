"""The window's text lines: a line already shown is not sent again (PyBullet's text call waits for the window's
next frame, ~20 ms, and the GUI redraws its ~10 lines 30 times a second)."""

import re

import pybullet as pb

from app.sim.window import Window


def test_a_text_line_already_shown_is_not_sent_to_the_window_again(monkeypatch):
    sent = []

    def add_text(text, at, rgb, size, replaceItemUniqueId, physicsClientId):
        sent.append((text, list(at), replaceItemUniqueId))
        return 100 + len(sent)

    monkeypatch.setattr(pb, "addUserDebugText", add_text)
    window = Window(client=0)
    window.text("status", ["env 0 | pos 1.20 mm"], [0.0, 0.0, 0.5])
    window.text("status", ["env 0 | pos 1.20 mm"], [0.0, 0.0, 0.5])
    assert sent == [("env 0 | pos 1.20 mm", [0.0, 0.0, 0.5], -1)]
    window.text("status", ["env 0 | pos 1.10 mm"], [0.0, 0.0, 0.5])  # new text replaces the item shown
    window.text("status", ["env 0 | pos 1.10 mm"], [0.0, 0.1, 0.5])  # so does a move (the camera turned)
    window.text("help", ["env 0 | pos 1.10 mm"], [0.0, 0.1, 0.5])  # another slot is an item of its own
    window.text("status", ["env 0 | pos 1.10 mm"], [0.0, 0.1, 0.5], rgb=(1.0, 0.0, 0.0))  # and a new colour
    assert [(text, at[1], replaced) for text, at, replaced in sent[1:]] == [
        ("env 0 | pos 1.10 mm", 0.0, 101), ("env 0 | pos 1.10 mm", 0.1, 102), ("env 0 | pos 1.10 mm", 0.1, -1),
        ("env 0 | pos 1.10 mm", 0.1, 103)]


def test_a_long_status_line_wraps_between_its_fields_and_never_past_the_width():
    from app.episode.gui import STATUS_WIDTH, wrap_status

    line = ("env 12 | tracking | pos left 1.20 mm, right 0.80 mm | rot 0.40 deg | at bound: 3 (table, block, "
            "link_4) | carry | gripper 47 mm, holding | holding the last target | view cam_high")
    pieces = wrap_status(line)
    assert len(pieces) > 1 and all(len(p) <= STATUS_WIDTH for p in pieces), pieces
    assert " | ".join(pieces) == line  # nothing lost, cut only at ' | '
    assert wrap_status("env 0 | reached") == ["env 0 | reached"]
    from app.episode.gui import HELP, WINDOW_HELP
    assert all(len(p) <= STATUS_WIDTH for p in WINDOW_HELP) and len(WINDOW_HELP) > len(HELP)  # the help wraps too
    assert " ".join(" ".join(WINDOW_HELP).split()) == " ".join(" ".join(HELP).split())


def test_every_help_line_reads_as_a_sentence_without_stray_punctuation():
    """The window's help showed "(cameras:; preview pane)": a YAML key and a semicolon inside brackets."""
    from app.episode.gui_keys import HELP

    for line in HELP:
        assert not re.search(r":;|\(\s*[;:,]|[;:,]\s*\)", line), line
