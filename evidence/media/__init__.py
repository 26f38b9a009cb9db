"""Recordings: what a video or an audio file holds, read with PyAV (FFmpeg bundled in its
wheels). ``video`` describes one (container, duration, streams, clock, device, position,
encoder, and what is wrong with it), ``structure`` tells a file cut short from the sizes
its container declares, ``iso6709`` reads the positions phones write.

This package's top level imports nothing heavy (no PyAV, no Django): the web process
reads a recording's day from here."""

from __future__ import annotations

from datetime import date, datetime


def recorded_day(taken_at: str) -> date | None:
    """The day of a ``taken_at`` as intake writes it: a photo's EXIF clock
    ("2014:03:12 09:30:00", as the camera read it) or a recording's ISO 8601 time with
    its offset ("2024-05-01T14:34:56+02:00": the day where it was recorded)."""
    try:
        return datetime.strptime(taken_at[:19], "%Y:%m:%d %H:%M:%S").date()  # noqa: DTZ007
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(taken_at).date()
    except ValueError:
        return None
