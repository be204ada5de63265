"""The GUI's keys and what each does: one list for the window's help, its start-up lines and ``--help`` (this
module imports nothing, so a command line's help costs no simulator import)."""

KEYS = (  # key, what it does (printed at start, shown in the window with h)
    (" ", "space: pause / resume"), ("n", "n: one step while paused"), ("r", "r: reset the arms"),
    ("[", "[ / ]: previous / next environment"), ("]", None), ("f", "f: camera follows the selected environment"),
    ("e", "e: pick again in the selected environment (pick-and-place)"),
    ("m", "m: look through the scene's next named camera (its picture shows in the preview pane), then the free view"),
    ("h", "h: show / hide this help"), ("q", "q, ESC or closing the window: quit and write the report"),
)
HELP = [text for _, text in KEYS if text]
