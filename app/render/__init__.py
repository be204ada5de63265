"""Outputs of a run: camera frames, atomic mp4, JSON report, tracking-error plot."""
