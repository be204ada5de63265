"""Progress lines and bars: the ETA comes from the pace after the first unit, so a slow start (numba's first
compile, a render pool starting) neither stretches nor shrinks it."""

import io

from app.render.progress import Progress


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(stream, start_up_s: float, per_unit_s: float, total: int = 100) -> tuple[str, dict[int, str]]:
    """The plain text written, and the bar as a terminal shows it (tqdm's rendering) after chosen counts."""
    clock = _Clock()
    progress = Progress("video", total, unit="frame", stream=stream, clock=clock)
    clock.now = start_up_s  # the first frame waits for the compile
    progress.update(1)
    bars = {}
    for done in range(2, total + 1):
        clock.now += per_unit_s
        progress.update(done)
        if progress.tty and done in (5, 50):
            bars[done] = str(progress._bar)
    progress.close()
    return stream.getvalue(), bars


def test_plain_lines_give_an_eta_from_the_pace_after_a_30_s_start_up():
    text, _ = _run(io.StringIO(), start_up_s=30.0, per_unit_s=0.1)
    half = next(line for line in text.splitlines() if line.startswith("video: 50/100"))
    eta = float(half.split("ETA ")[1].split(" s")[0])
    assert abs(eta - 5.0) < 0.2, half  # 50 frames left at 0.1 s each; the 30 s start-up is not a frame's pace


def test_a_terminal_bar_shows_the_same_eta_and_none_before_a_tenth():
    _, bars = _run(_Terminal(), start_up_s=30.0, per_unit_s=0.1)
    assert "5/100" in bars[5] and "ETA" not in bars[5], bars[5]
    assert "50/100" in bars[50] and "ETA 5.0 s" in bars[50], bars[50]


def test_units_finishing_in_a_burst_with_the_first_give_no_eta_of_zero():
    """Blocks of 4 episodes finishing together after 480 s (a recording on workers): the ETA said 0.0 s with 6
    of 10 to go; the burst now counts as the first unit, and the next block's pace gives the estimate."""
    clock, stream = _Clock(), io.StringIO()
    progress = Progress("episodes", 10, unit="episode", stream=stream, clock=clock)
    clock.now = 480.0
    etas = []
    for _ in range(4):
        progress.add(1)
        etas.append(progress.eta())
        clock.now += 0.001
    clock.now = 600.0
    for _ in range(3):
        progress.add(1)
        etas.append(progress.eta())
    assert etas[:4] == ["", "", "", ""], etas  # nothing is known of the pace yet: no estimate, not 0.0 s
    assert etas[4] == f"ETA {(600.0 - 480.003) * 5 / 1:.1f} s", etas  # the pace since the burst
