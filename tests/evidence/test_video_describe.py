"""A video or an audio recording is described from its own bytes (PyAV): container,
duration, streams, the recorder's clock, make and model, position, encoder; a file cut
short, lying about its type or empty says so. Every recording here is made by the test
with PyAV, as phones and cameras write them (QuickTime user data, Apple's keys)."""

import io
import json
import math
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import av
import pytest
from PIL import Image

from evidence.flags import FLAG_LABELS
from evidence.intake.payload import IntakeResult, SourceFile
from evidence.media import recorded_day
from evidence.media.iso6709 import Position, parse_iso6709
from evidence.media.video import PROBLEMS, apply_description, describe_video
from tests.evidence.images import jpeg_bytes

DAMASCUS = "+33.5138+036.2765+680.000/"


# -- making recordings -----------------------------------------------------------------
def _picture(i: int, size: tuple[int, int]) -> Image.Image:
    """A frame with a bar that moves: cheap to encode, never all one colour."""
    img = Image.new("RGB", size, (20, 40, 60))
    x = (i * 7) % size[0]
    img.paste((230, 200, 40), (x, 0, min(size[0], x + size[0] // 4), size[1]))
    return img


def _tone(n: int, start: int, rate: int, channels: int) -> av.AudioFrame:
    samples = [int(8000 * math.sin(2 * math.pi * 440 * (start + k) / rate)) for k in range(n)]
    interleaved = [s for s in samples for _ in range(channels)]
    frame = av.AudioFrame(format="s16", layout="stereo" if channels == 2 else "mono", samples=n)
    frame.planes[0].update(struct.pack(f"<{len(interleaved)}h", *interleaved))
    frame.sample_rate, frame.pts = rate, start
    return frame


def recording(
    path: Path,
    *,
    fmt: str | None = None,
    video: str | None = "libx264",
    audio: str | None = "aac",
    seconds: float = 1.0,
    size: tuple[int, int] = (160, 120),
    rate: int = 10,
    tags: dict[str, str] | None = None,
    options: dict[str, str] | None = None,
    rotation: float | None = None,
    sample_rate: int = 48000,
    channels: int = 2,
) -> bytes:
    """Write a recording with PyAV and return its bytes."""
    with av.open(str(path), "w", format=fmt, options=options or {}) as out:
        out.metadata.update(tags or {})
        v = a = None
        if video:
            v = out.add_stream(video, rate=rate)
            v.width, v.height, v.pix_fmt = size[0], size[1], "yuv420p"
            if rotation is not None:
                v.set_display_rotation(rotation)
        if audio:
            a = out.add_stream(audio, rate=sample_rate)
            a.layout = "stereo" if channels == 2 else "mono"
        if v is not None:
            for i in range(int(seconds * rate)):
                out.mux(v.encode(av.VideoFrame.from_image(_picture(i, size))))
            out.mux(v.encode(None))
        if a is not None:
            done = 0
            while done < seconds * sample_rate:
                out.mux(a.encode(_tone(1024, done, sample_rate, channels)))
                done += 1024
            out.mux(a.encode(None))
    return path.read_bytes()


def described(data: bytes):
    return describe_video(io.BytesIO(data))


def codes(desc) -> set[str]:
    return {code for code, _ in desc.problems}


# -- ISO 6709 ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+33.5138+036.2765+680.000/", Position(33.5138, 36.2765, 680.0)),  # iPhone
        ("+33.5138+036.2765/", Position(33.5138, 36.2765)),  # Android, no altitude
        ("+33.5138+036.2765", Position(33.5138, 36.2765)),  # no closing slash
        ("-33.8688+151.2093-012.5/", Position(-33.8688, 151.2093, -12.5)),  # south, below sea
        ("+40.6894-074.0447/", Position(40.6894, -74.0447)),  # west
        ("-00.5-000.5/", Position(-0.5, -0.5)),
        ("+3330.828+03616.590/", Position(33.5138, 36.2765)),  # degrees and minutes
        ("+333049.68+0361635.4/", Position(33.5138, 36.2765)),  # degrees, minutes, seconds
        ("+27.5916+086.5640+8850CRSWGS_84/", Position(27.5916, 86.564, 8850.0)),
        ("  +1.5+103.8/ ", Position(1.5, 103.8)),  # leading zeros dropped, spaces around
    ],
)
def test_an_iso_6709_position_is_read_in_each_form_writers_use(text, expected):
    got = parse_iso6709(text)
    assert got is not None
    assert got.latitude == pytest.approx(expected.latitude, abs=1e-4)
    assert got.longitude == pytest.approx(expected.longitude, abs=1e-4)
    assert got.altitude == expected.altitude


@pytest.mark.parametrize(
    "text",
    ["", "/", "33.5138 36.2765", "+91.0+036.0/", "+33.0+181.0/", "+3375.0+03616.0/", "+33.5/",
     "+33.5138+036.2765+680+1/", "N33 E36", "+33.5138,+036.2765/", "+12345.0+036.0/"],
)  # fmt: skip
def test_what_is_not_an_iso_6709_point_is_refused(text):
    assert parse_iso6709(text) is None


# -- what is read ------------------------------------------------------------------------
def test_a_phone_mov_gives_its_clock_device_position_rotation_and_streams(tmp_path):
    """As an iPhone writes it: Apple's keys (the clock with its offset), a portrait
    recording stored sideways with a display matrix turning it a quarter clockwise."""
    tags = {
        "com.apple.quicktime.location.ISO6709": DAMASCUS,
        "com.apple.quicktime.make": "Apple",
        "com.apple.quicktime.model": "iPhone 15 Pro",
        "com.apple.quicktime.software": "17.4.1",
        "com.apple.quicktime.creationdate": "2024-05-01T14:34:56+0200",
    }
    data = recording(
        tmp_path / "IMG_0001.MOV",
        fmt="mov",
        tags=tags,
        options={"movflags": "use_metadata_tags"},
        rotation=-90,  # counter-clockwise in PyAV's terms: a quarter turn clockwise
        size=(192, 108),
        seconds=2,
    )
    desc = described(data)
    assert desc.problems == []
    assert (desc.container, desc.brand) == ("mov,mp4,m4a,3gp,3g2,mj2", "qt")
    assert desc.duration_s == pytest.approx(2.0, abs=0.05)
    assert (desc.make, desc.model, desc.encoder) == ("Apple", "iPhone 15 Pro", "17.4.1")
    assert desc.created_at == "2024-05-01T14:34:56+02:00"
    assert desc.gps == (33.5138, 36.2765, 680.0)
    assert desc.location_text == DAMASCUS
    video, audio = desc.streams
    assert (video.type, video.codec, video.width, video.height) == ("video", "h264", 192, 108)
    assert (video.rotation, video.display_width, video.display_height) == (90, 108, 192)
    assert video.frame_rate == 10.0 and video.frames == 20 and video.decoded
    assert video.bit_rate and video.pixel_format == "yuv420p"
    assert (audio.type, audio.codec) == ("audio", "aac")
    assert (audio.channels, audio.sample_rate) == (2, 48000)
    assert audio.channel_layout == "stereo" and audio.decoded and audio.bit_rate


def test_quicktime_user_data_gives_the_position_make_and_model(tmp_path):
    """FFmpeg's own MOV writer puts the position in ``©xyz``, make and model in
    ``©mak``/``©mod`` and the clock in the movie header (UTC)."""
    tags = {
        "location": "-33.8688+151.2093/",
        "make": "samsung",
        "model": "SM-G991B",
        "creation_time": "2023-11-02T08:00:01Z",
    }
    desc = described(recording(tmp_path / "a.mov", fmt="mov", tags=tags, rotation=180))
    assert (desc.make, desc.model) == ("samsung", "SM-G991B")
    assert desc.gps == (-33.8688, 151.2093)
    assert desc.created_at == "2023-11-02T08:00:01+00:00"
    assert desc.main_video.rotation == 180
    assert (desc.main_video.display_width, desc.main_video.display_height) == (160, 120)


def test_an_mp4_s_position_and_clock_are_read_and_its_encoder_named(tmp_path):
    tags = {"location": "+40.6894-074.0447/", "creation_time": "2022-01-01T00:00:00Z"}
    desc = described(recording(tmp_path / "a.mp4", tags=tags, options={"movflags": "faststart"}))
    assert desc.brand == "isom" and desc.gps == (40.6894, -74.0447)
    assert desc.created_at == "2022-01-01T00:00:00+00:00"
    assert desc.encoder.startswith("Lavf")
    assert [s.codec for s in desc.streams] == ["h264", "aac"]
    assert desc.main_video.rotation == 0 and desc.bit_rate


@pytest.mark.parametrize(
    ("name", "fmt", "video", "audio", "expected"),
    [
        ("a.webm", "webm", "libvpx-vp9", "libopus", ("matroska,webm", ["vp9", "opus"])),
        ("b.webm", "webm", "libvpx", None, ("matroska,webm", ["vp8"])),
        ("c.3gp", "3gp", "h263", "aac", ("mov,mp4,m4a,3gp,3g2,mj2", ["h263", "aac"])),
        ("d.avi", "avi", "mpeg4", "libmp3lame", ("avi", ["mpeg4", "mp3"])),
        ("e.mp4", "mp4", "libx264", None, ("mov,mp4,m4a,3gp,3g2,mj2", ["h264"])),
    ],
)
def test_each_container_and_codec_is_described(tmp_path, name, fmt, video, audio, expected):
    size = (176, 144) if video == "h263" else (160, 120)
    desc = described(recording(tmp_path / name, fmt=fmt, video=video, audio=audio, size=size))
    assert desc.problems == []
    assert (desc.container, [s.codec for s in desc.streams]) == expected
    assert desc.duration_s == pytest.approx(1.0, abs=0.15)  # an MP3's padding in AVI
    assert (desc.main_video.width, desc.main_video.height) == size
    assert desc.main_video.frame_rate == 10.0
    assert all(s.decoded for s in desc.streams)
    assert [s.type for s in desc.streams] == ["video", "audio"][: len(expected[1])]
    assert desc.created_at == "" and desc.gps is None  # nothing said, nothing made up


@pytest.mark.parametrize(
    ("name", "fmt", "codec", "container", "codec_name"),
    [
        ("a.mp3", "mp3", "libmp3lame", "mp3", "mp3"),
        ("b.wav", "wav", "pcm_s16le", "wav", "pcm_s16le"),
        ("c.m4a", "ipod", "aac", "mov,mp4,m4a,3gp,3g2,mj2", "aac"),
        ("d.aac", "adts", "aac", "aac", "aac"),
    ],
)
def test_an_audio_recording_gives_duration_codec_channels_rate(
    tmp_path, name, fmt, codec, container, codec_name
):
    data = recording(
        tmp_path / name, fmt=fmt, video=None, audio=codec, seconds=3, sample_rate=44100, channels=1
    )
    desc = described(data)
    assert desc.problems == []
    assert desc.container == container and desc.main_video is None
    assert desc.duration_s == pytest.approx(3.0, abs=0.1)
    (audio,) = desc.streams
    assert (audio.codec, audio.channels, audio.sample_rate) == (codec_name, 1, 44100)
    assert audio.decoded and audio.bit_rate


# -- what is wrong -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "fmt", "video", "audio", "options", "readable"),
    [
        ("moov-last.mp4", "mp4", "libx264", "aac", {}, False),  # the index is lost
        ("faststart.mp4", "mp4", "libx264", "aac", {"movflags": "faststart"}, True),
        ("a.mov", "mov", "libx264", "aac", {"movflags": "faststart"}, True),
        ("a.3gp", "3gp", "h263", "aac", {}, False),
        ("a.webm", "webm", "libvpx-vp9", "libopus", {}, True),
        ("a.avi", "avi", "mpeg4", "libmp3lame", {}, True),
        ("a.wav", "wav", None, "pcm_s16le", {}, True),
        ("a.mp3", "mp3", None, "libmp3lame", {}, True),  # its Xing header says how long
    ],
)
def test_a_recording_cut_at_half_is_flagged_truncated_with_what_could_be_read(
    tmp_path, name, fmt, video, audio, options, readable
):
    size = (176, 144) if video == "h263" else (160, 120)
    seconds = 8 if video is None else 2
    whole = recording(
        tmp_path / name, fmt=fmt, video=video, audio=audio, options=options, size=size,
        seconds=seconds,
    )  # fmt: skip
    assert "truncated" not in codes(described(whole))
    desc = described(whole[: len(whole) // 2])
    reasons = dict(desc.problems)
    assert reasons["truncated"].startswith("cut short: ")
    if readable:  # its header came first: what it holds is described, its start decodes
        assert desc.streams and desc.streams[0].decoded
        assert "no_decodable_stream" not in reasons
    else:
        assert desc.streams == []
        assert "Invalid data found" in reasons["no_decodable_stream"]
        assert "0x" not in reasons["no_decodable_stream"]  # no object's address in it


def test_a_file_that_is_not_a_recording_has_no_decodable_stream():
    for data in (jpeg_bytes(1), b"\x00" * 5000, b"ID3\x04\x00\x00\x00\x00\x00\x10" + b"x" * 64):
        desc = described(data)
        assert "no_decodable_stream" in codes(desc), data[:10]
    assert dict(described(b"").problems) == {"no_decodable_stream": "zero-byte file"}


def test_a_video_whose_frames_are_damaged_says_so_and_keeps_what_it_read(tmp_path):
    data = bytearray(recording(tmp_path / "a.mkv", fmt="matroska", video="libx264", audio=None))
    # The H.264 stream's parameter sets and every frame overwritten: the container (and
    # its sizes) intact, nothing decodable in it.
    start = data.find(b"\x1f\x43\xb6\x75")  # the first Cluster
    data[start + 64 :] = b"\x00" * (len(data) - start - 64)
    desc = described(bytes(data))
    assert desc.container == "matroska,webm" and desc.streams[0].codec == "h264"
    assert desc.streams[0].decoded is False
    assert "none of its streams decodes" in dict(desc.problems)["no_decodable_stream"]


def test_a_position_that_is_no_position_is_flagged_and_not_used(tmp_path):
    desc = described(recording(tmp_path / "a.mov", fmt="mov", tags={"location": "+95.0+200.0/"}))
    assert desc.gps is None and desc.location_text == "+95.0+200.0/"
    assert "gps_invalid" in codes(desc)


def test_a_clock_never_set_or_without_offset_is_no_recording_time(tmp_path):
    unset = {"creation_time": "1970-01-01T00:00:00Z"}
    assert described(recording(tmp_path / "a.mov", fmt="mov", tags=unset)).created_at == ""
    naive = {"com.apple.quicktime.creationdate": "2024-05-01T14:34:56"}
    desc = described(
        recording(
            tmp_path / "b.mov", fmt="mov", tags=naive, options={"movflags": "use_metadata_tags"}
        )
    )
    assert desc.created_at == ""  # kept as read in the tags only
    assert desc.tags["com.apple.quicktime.creationdate"] == "2024-05-01T14:34:56"


# -- into the intake result --------------------------------------------------------------
def test_a_description_fills_the_fields_photos_use(tmp_path):
    tags = {"location": DAMASCUS, "make": "Apple", "model": "iPhone 8"}
    tags["creation_time"] = "2024-05-01T22:30:00Z"
    data = recording(tmp_path / "a.mov", fmt="mov", tags=tags, rotation=90, size=(192, 108))
    result = IntakeResult(source=SourceFile(path="a.mov"), kind="video")
    apply_description(described(data), result)
    assert (result.camera_make, result.camera_model) == ("Apple", "iPhone 8")
    assert result.taken_at == "2024-05-01T22:30:00+00:00"
    assert recorded_day(result.taken_at).isoformat() == "2024-05-01"
    assert result.gps == (33.5138, 36.2765)
    assert (result.width, result.height) == (108, 192)  # as shown, after its turn
    video = json.loads(json.dumps(result.metadata["video"]))  # JSON as stored
    assert video["gps"] == [33.5138, 36.2765, 680.0]
    assert video["streams"][0]["rotation"] == 270 and video["tool"].startswith("PyAV ")
    assert result.flags == []

    cut = IntakeResult(source=SourceFile(path="b.m4a"), kind="audio")
    apply_description(described(data[: len(data) // 2]), cut)
    assert {f["code"] for f in cut.flags} == {"truncated", "no_decodable_stream"}
    assert cut.metadata["audio"]["problems"][0]["code"] == "truncated"


def test_every_problem_a_description_names_has_a_label():
    assert set(PROBLEMS) <= FLAG_LABELS.keys()
    source = Path("evidence/media/video.py").read_text()
    import re

    named = set(re.findall(r"""\.problem\(\s*["'](\w+)["']""", source))
    assert named and named <= set(PROBLEMS), named - set(PROBLEMS)


def test_a_recording_day_is_told_from_either_clock():
    assert recorded_day("2013:08:21 10:15:00").isoformat() == "2013-08-21"
    assert recorded_day("2024-05-01T00:30:00+03:00").isoformat() == "2024-05-01"
    assert recorded_day("not a date") is None


# -- memory ------------------------------------------------------------------------------
_MEASURE = """
import sys
from pathlib import Path
from evidence.media.video import describe_video

def peak():  # the process's resident high-water mark (VmHWM), in bytes
    status = Path("/proc/self/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("VmHWM")).split()[1]) << 10

describe_video(sys.argv[2])  # libraries loaded and warmed on a small recording
Path("/proc/self/clear_refs").write_text("5")  # the high-water mark set to what is resident
before = peak()
desc = describe_video(sys.argv[1])
print(peak() - before, desc.duration_s, len(desc.problems))
"""


def _large(path: Path, frames: int) -> None:
    """An H.264 MP4 of ``frames`` intra frames of noise (about 1.3 MB each), made by
    encoding eight and repeating their packets (the cost of a few frames only)."""
    with av.open(str(path), "w", format="mp4") as out:
        v = out.add_stream("libx264", rate=25, options={"crf": "0", "preset": "ultrafast"})
        v.width, v.height, v.pix_fmt = 1280, 720, "yuv420p"
        v.codec_context.gop_size = 1
        noise = [Image.effect_noise((1280, 720), 90 + i).convert("RGB") for i in range(8)]
        made = [p for img in noise for p in v.encode(av.VideoFrame.from_image(img))]
        made += v.encode(None)
        payloads = [bytes(p) for p in made]
        for n in range(frames):
            packet = av.Packet(payloads[n % len(payloads)])
            packet.stream, packet.time_base = v, Fraction(1, 25)
            packet.pts = packet.dts = n
            packet.duration, packet.is_keyframe = 1, True
            out.mux(packet)


def test_describing_reads_a_large_video_by_streaming_it(tmp_path):
    big, small = tmp_path / "big.mp4", tmp_path / "small.mp4"
    _large(big, 60)
    recording(small)
    size = big.stat().st_size
    assert size > 60 << 20
    code = [sys.executable, "-c", _MEASURE, str(big), str(small)]
    out = subprocess.run(code, capture_output=True, text=True, check=True, cwd=Path.cwd())
    grown, duration, problems = out.stdout.split()
    assert float(duration) == pytest.approx(60 / 25, abs=0.05) and problems == "0"
    print(f"describing {size >> 20} MiB grew the process by {int(grown) >> 20} MiB")
    assert int(grown) < size / 8, (int(grown) >> 20, size >> 20)
