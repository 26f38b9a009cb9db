"""Describing a video or an audio recording with PyAV: container, duration, streams
(codec, size, frame rate, rotation, bit rate, channels, sample rate), the clock it was
recorded by, the device's make and model, its position (ISO 6709) and its encoder, and
what is wrong with it (cut short, nothing in it decodes).

The file is read through FFmpeg's demuxer from a path or a seekable file: headers, the
index and the first frame of each main stream, never the whole file; a 4 GB video is
described in the memory of a short one. No Django and no database here: intake worker
processes run it (``describe_recording``).
"""

from __future__ import annotations

import errno
import io
import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, BinaryIO

import av
import av.error

from ..intake.payload import IntakeResult
from .iso6709 import parse_iso6709
from .structure import cut_short

TOOL = f"PyAV {av.__version__} (FFmpeg {av.ffmpeg_version_info})"
PACKETS_TO_DECODE = 600  # a main stream with no frame after this many packets is undecodable
TAGS_KEPT = 100  # container tags recorded, at most, each cut at TAG_CHARS
TAG_CHARS = 500
END_WINDOW_S = 3.0  # how far before its declared end a stream is read, to see it is there
END_SLACK_S = 1.0  # its data may end this much before its declared length
_LENGTH_DECLARED = ("mp3",)  # demuxers whose length comes from a header, not the size

# The demuxers a recording is read with (FFmpeg's names): those of the containers phones,
# cameras, recorders and CCTV exports write. A picture, a playlist or anything else FFmpeg
# could open is not handed to its demuxer.
DEMUXERS = ",".join(
    ("mov", "matroska", "webm", "avi", "mp3", "aac", "amr", "amrnb", "amrwb", "wav", "w64",
     "ogg", "flac", "mpegts", "mpeg", "flv", "asf", "caf", "aiff", "h264", "hevc", "m4v")
)  # fmt: skip

# Where each fact is written, most telling first (Apple's keys, then QuickTime's
# user data as FFmpeg names it, then Android's).
_POSITION_KEYS = ("com.apple.quicktime.location.ISO6709", "location", "location-eng")
_MAKE_KEYS = ("com.apple.quicktime.make", "make", "com.android.manufacturer")
_MODEL_KEYS = ("com.apple.quicktime.model", "model", "com.android.model")
# Apple's creation date keeps the offset of the place it was recorded; the movie header's
# (FFmpeg's ``creation_time``) is in UTC.
_CLOCK_KEYS = ("com.apple.quicktime.creationdate", "creation_time", "date")
_ENCODER_KEYS = ("com.apple.quicktime.software", "encoder", "software", "encoded_by")

# The problems a description may name (flag codes: evidence/flags.py labels each).
PROBLEMS = ("truncated", "no_decodable_stream", "stream_undecodable", "gps_invalid")


@dataclass
class StreamDescription:
    index: int
    type: str  # video, audio, subtitle, data, attachment
    codec: str = ""
    codec_long: str = ""
    profile: str = ""
    duration_s: float | None = None
    bit_rate: int | None = None
    language: str = ""
    # Video: the coded size, and the size and turn it is shown at.
    width: int | None = None
    height: int | None = None
    frame_rate: float | None = None
    frames: int | None = None
    pixel_format: str = ""
    rotation: int | None = None  # degrees clockwise the picture is turned to be shown
    display_width: int | None = None
    display_height: int | None = None
    # Audio
    channels: int | None = None
    channel_layout: str = ""
    sample_rate: int | None = None
    decoded: bool | None = None  # a frame of it was decoded (None: not tried)
    encoder: str = ""


@dataclass
class VideoDescription:
    container: str = ""  # FFmpeg's name of the demuxer that read it
    container_long: str = ""
    brand: str = ""  # an ISO file's major brand ("qt  ", "isom", "3gp4")
    duration_s: float | None = None
    bit_rate: int | None = None
    streams: list[StreamDescription] = field(default_factory=list)
    created_at: str = ""  # ISO 8601 with its offset, as the recorder's clock said
    make: str = ""
    model: str = ""
    gps: tuple[float, float] | tuple[float, float, float] | None = None  # lat, lon[, alt]
    location_text: str = ""  # the position as written
    encoder: str = ""
    tags: dict[str, str] = field(default_factory=dict)  # the container's tags as read
    problems: list[tuple[str, str]] = field(default_factory=list)
    tool: str = TOOL

    def problem(self, code: str, reason: str) -> None:
        self.problems.append((code, reason))

    @property
    def main_video(self) -> StreamDescription | None:
        return next((s for s in self.streams if s.type == "video"), None)

    def as_json(self) -> dict[str, Any]:
        """The description as JSON (Provenance.metadata): lists for tuples, and values
        without None, so a recording's metadata says only what was found."""
        plain = asdict(self)
        plain["streams"] = [
            {k: v for k, v in s.items() if v not in (None, "")} for s in plain["streams"]
        ]
        plain["problems"] = [{"code": c, "reason": r} for c, r in self.problems]
        if self.gps is not None:
            plain["gps"] = list(self.gps)
        return {k: v for k, v in plain.items() if v not in (None, "", [], {})}


# -- reading values ------------------------------------------------------------------
def _text(value: Any, limit: int = TAG_CHARS) -> str:
    """A tag's text as it may be stored (PostgreSQL text holds no NUL)."""
    return str(value).replace("\x00", "").strip()[:limit]


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return round(number, 3) if math.isfinite(number) and number > 0 else None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


def _first(tags: dict[str, str], keys: tuple[str, ...]) -> str:
    lowered = {k.lower(): v for k, v in tags.items()}
    for key in keys:
        if value := _text(lowered.get(key.lower(), "")):
            return value
    return ""


def _clock(tags: dict[str, str]) -> str:
    """The first of the clock's tags that is an aware time (a clock never set, the
    1904 or 1970 epoch, is no time; a time without offset is kept in the tags only)."""
    lowered = {k.lower(): v for k, v in tags.items()}
    for key in _CLOCK_KEYS:
        text = _text(lowered.get(key, ""))
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            continue
        if when.tzinfo is None or when.astimezone(UTC).year < 1971:
            continue
        spec = "microseconds" if when.microsecond else "seconds"
        return when.isoformat(timespec=spec)
    return ""


def _seconds(value: int | None, time_base: Fraction | None) -> float | None:
    if value is None or time_base is None:
        return None
    return _number(value * time_base)


def _why(exc: Exception) -> str:
    """FFmpeg's reason, without the name of what it read (a path, or a file object's
    address): the same file gives the same reason however it is taken in."""
    return str(getattr(exc, "strerror", None) or exc)


# -- describing ------------------------------------------------------------------------
def describe_video(source: str | BinaryIO) -> VideoDescription:
    """What the recording at ``source`` (a path, or a seekable binary file) holds. Never
    raises for a bad file: what could not be read is named in ``problems``."""
    if isinstance(source, str):
        with open(source, "rb") as fh:  # noqa: PTH123 (a path given as text, as PyAV takes)
            return describe_video(fh)
    desc = VideoDescription()
    size = source.seek(0, io.SEEK_END)
    if size == 0:
        desc.problem("no_decodable_stream", "zero-byte file")
        return desc
    try:
        if why := cut_short(source, size):
            desc.problem("truncated", f"cut short: {why}")
    except OSError as exc:
        desc.problem("truncated", f"its container could not be read to the end: {exc}")
    source.seek(0)
    try:
        container = av.open(source, "r", options={"format_whitelist": DEMUXERS})
    except (av.error.FFmpegError, ValueError, OSError) as exc:
        if getattr(exc, "errno", None) == errno.EINVAL:  # refused by DEMUXERS
            why = "its content is in none of the containers recordings are read from"
        else:
            why = f"FFmpeg cannot read it as a recording: {_why(exc)}"
        desc.problem("no_decodable_stream", why)
        return desc
    with container:
        _read_container(container, desc)
        _decode_first_frames(container, desc)
        if not any(p[0] == "truncated" for p in desc.problems):
            _check_end(container, desc)
    return desc


def _read_container(container: Any, desc: VideoDescription) -> None:
    desc.container = container.format.name
    desc.container_long = _text(container.format.long_name or "")
    tags = {_text(k, 100): _text(v) for k, v in list(container.metadata.items())[:TAGS_KEPT]}
    desc.tags = tags
    desc.brand = tags.get("major_brand", "")
    desc.duration_s = _seconds(container.duration, Fraction(1, av.time_base))
    desc.bit_rate = _positive(container.bit_rate)
    desc.created_at = _clock(tags)
    desc.make, desc.model = _first(tags, _MAKE_KEYS)[:100], _first(tags, _MODEL_KEYS)[:100]
    desc.encoder = _first(tags, _ENCODER_KEYS)
    if location := _first(tags, _POSITION_KEYS):
        desc.location_text = location
        position = parse_iso6709(location)
        if position is None:
            desc.problem("gps_invalid", f"position {location!r} is not ISO 6709 or out of range")
        else:
            lat, lon, alt = position
            desc.gps = (lat, lon) if alt is None else (lat, lon, alt)
    for stream in container.streams:
        desc.streams.append(_stream(stream))
    if not desc.created_at:  # a track's clock, when the movie's says nothing
        for stream in container.streams:
            if when := _clock(dict(stream.metadata)):
                desc.created_at = when
                break
    if desc.duration_s is None:
        durations = [s.duration_s for s in desc.streams if s.duration_s]
        desc.duration_s = max(durations) if durations else None


def _stream(stream: Any) -> StreamDescription:
    out = StreamDescription(index=stream.index, type=stream.type)
    out.duration_s = _seconds(stream.duration, stream.time_base)
    out.language = _text(stream.language or "", 20)
    out.encoder = _text(stream.metadata.get("encoder", ""), 100)
    ctx = stream.codec_context
    if ctx is None:
        return out
    out.codec = (ctx.codec.canonical_name if ctx.codec else ctx.name) or ""
    out.codec_long = _text(ctx.codec.long_name or "", 100) if ctx.codec else ""
    out.profile = _text(stream.profile or "", 50)
    out.bit_rate = _positive(ctx.bit_rate)
    if stream.type == "video":
        out.width, out.height = _positive(ctx.width), _positive(ctx.height)
        out.display_width, out.display_height = out.width, out.height
        out.frame_rate = _number(stream.average_rate) or _number(stream.guessed_rate)
        out.frames = _positive(stream.frames)
        out.pixel_format = ctx.pix_fmt or ""
    elif stream.type == "audio":
        out.sample_rate = _positive(ctx.sample_rate)
        layout = ctx.layout
        out.channels = _positive(layout.nb_channels) if layout else None
        out.channel_layout = layout.name if layout else ""
    return out


def _decode_first_frames(container: Any, desc: VideoDescription) -> None:
    """Decode the first frame of the main video and the main audio stream (one pass
    from the start, stopping as soon as each has one): the rotation comes with the
    video's frame. Each is said decodable or not; a recording where neither decodes is
    flagged."""
    main = {}
    for kind in ("video", "audio"):
        streams = [s for s in container.streams if s.type == kind and s.codec_context]
        if streams:
            main[streams[0].index] = streams[0]
    if not main:
        desc.problem("no_decodable_stream", "it holds no video or audio stream")
        return
    by_index = {s.index: s for s in desc.streams}
    for index, stream in main.items():
        stream.codec_context.thread_type = "SLICE"  # one frame wanted: no frame delay
        by_index[index].decoded = False
    errors: dict[int, str] = {}
    waiting = dict(main)
    seen = 0
    try:
        for packet in container.demux(list(main.values())):
            index = packet.stream.index
            if index not in waiting:
                continue
            seen += 1
            try:
                frames = packet.stream.decode(packet)  # a None packet at the end: flush
            except (av.error.FFmpegError, ValueError) as exc:
                errors[index] = _why(exc)
                frames = []
            if frames:
                _took(by_index[index], frames[0])
                del waiting[index]
            if not waiting or seen > PACKETS_TO_DECODE:
                break
    except (av.error.FFmpegError, ValueError, OSError) as exc:
        errors.setdefault(-1, _why(exc))
    decoded = [s for s in by_index.values() if s.decoded]
    failed = [by_index[i] for i in main if not by_index[i].decoded]
    if not decoded:
        reason = "; ".join(sorted(set(errors.values()))) or "no frame came out of it"
        desc.problem("no_decodable_stream", f"none of its streams decodes: {reason}")
    elif failed:
        names = ", ".join(f"{s.type} #{s.index} ({s.codec or 'unknown codec'})" for s in failed)
        desc.problem("stream_undecodable", f"{names}: no frame decodes")


def _took(stream: StreamDescription, frame: Any) -> None:
    stream.decoded = True
    if stream.type != "video":
        return
    # PyAV gives the display matrix's turn counter-clockwise; players (and phones' old
    # ``rotate`` tag) say how far to turn clockwise.
    turn = round(-frame.rotation / 90) * 90 % 360 if frame.rotation else 0
    stream.rotation = turn
    if turn in (90, 270):
        stream.display_width, stream.display_height = stream.height, stream.width


def _check_end(container: Any, desc: VideoDescription) -> None:
    """An MP3 declares no size, but may declare its length (its Xing or VBRI header):
    its last seconds must then be there. Read from a little before the declared end;
    data ending earlier is a file cut short. (Other kinds either had their sizes
    checked, ``structure.cut_short``, or have their length estimated from the file's
    size, which a cut file fits as well as a whole one.)"""
    if desc.container not in _LENGTH_DECLARED or not desc.duration_s:
        return
    if desc.duration_s <= END_WINDOW_S:
        return
    streams = [s for s in container.streams if s.type in ("audio", "video")]
    if not streams:
        return
    stream = streams[0]
    target = int((desc.duration_s - END_WINDOW_S) * av.time_base)
    last = None
    try:
        container.seek(target, backward=True, any_frame=False)
        for packet in container.demux(stream):
            if packet.pts is not None and packet.time_base is not None:
                end = (packet.pts + (packet.duration or 0)) * packet.time_base
                last = end if last is None else max(last, end)
    except (av.error.FFmpegError, ValueError, OSError):
        pass
    start = _seconds(stream.start_time, stream.time_base) or 0.0
    if last is None or float(last) - start < desc.duration_s - END_SLACK_S:
        read = "nothing" if last is None else f"up to {float(last) - start:.1f} s"
        desc.problem(
            "truncated",
            f"cut short: its header says {desc.duration_s:.1f} s, its data holds {read}",
        )


# -- into intake ----------------------------------------------------------------------
def apply_description(desc: VideoDescription, result: IntakeResult) -> None:
    """Put a description into an intake result: the metadata under the result's kind
    ("video" or "audio"), and the fields photos fill (taken_at, gps, camera make and
    model, the main picture's size as shown), each problem as a flag."""
    result.metadata = {**result.metadata, _key(result): desc.as_json()}
    result.taken_at = desc.created_at[:40]
    result.camera_make, result.camera_model = desc.make, desc.model
    if desc.gps is not None:
        result.gps = (desc.gps[0], desc.gps[1])
    if (video := desc.main_video) is not None:
        result.width, result.height = video.display_width, video.display_height
    for code, reason in desc.problems:
        result.flag(code, reason)


def _key(result: IntakeResult) -> str:
    return "audio" if result.kind == "audio" else "video"


def describe_recording(work: Any) -> None:
    """The intake step for video and audio (``work``: evidence.intake.steps.FileWork).
    A file small enough is described from the bytes in hand; a larger one (only its
    head in hand) from its stored original, once it is written."""
    result = work.result
    if result.kind not in ("video", "audio") or result.size == 0:
        return
    try:
        if len(work.data) >= result.size:
            apply_description(describe_video(io.BytesIO(work.data)), result)
            return
        if result.existing == "mismatch":
            return  # the stored copy is not these bytes (flagged): nothing true to describe
        if work.writer is not None:
            work.writer.result()
        with work.storage.open(result.storage_key) as fh:
            apply_description(describe_video(fh), result)
    except Exception as exc:  # stored and hashed all the same: flagged with the reason
        result.flag("undecodable", f"not described: {type(exc).__name__}: {exc}")
