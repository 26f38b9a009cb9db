"""Benchmark describing videos: 100 phone-like clips, and the memory one large file takes.

    .venv/bin/python bench/media.py [--clips 100] [--repeat 3] [--large-gb 0.5]

The clips (made once under ``var/bench/media/``) are what phones write: H.264 + AAC in
MOV and MP4, 720p and 1080p at 30 frames/s, 10 to 60 s long, with Apple's keys or
QuickTime user data (position, make, model, clock), some turned a quarter (portrait). To
keep making them cheap, two seconds of simple frames are encoded once per size and their
packets repeated to the clip's length, at a low bit rate: to the demuxer and the decoder
they are clips like any other.

It times, over every clip, best of ``--repeat``:

1. ``evidence.media.video.describe_video``: what intake runs on each video;
2. the floor: PyAV's bare probe (open, the container's and streams' headers) and the
   decode of the first video frame, nothing else, in the same run.

Then it makes one large file (``--large-gb``; ``--large-gb 4`` for the issue's 4 GB: 1080p
intra frames of noise, repeated) and describes it in a fresh process, measuring the
process's resident high-water mark over the description alone (Linux ``VmHWM``, reset
with ``clear_refs``). Goals: ratio at most 1.3, peak under 300 MB. The last line reads
`clips=N describe_s=D floor_s=F ratio=R rate_per_s=X large_mb=L peak_mb=P`.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import av
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evidence.media.video import describe_video  # noqa: E402  (after the path is set)

OUT = ROOT / "var" / "bench" / "media"
RATE = 30
AUDIO_RATE = 48000
GOP_S = 2
SIZES = ((1280, 720), (1920, 1080))


def _frames(size: tuple[int, int]) -> list[Image.Image]:
    frames = []
    for i in range(GOP_S * RATE):
        img = Image.new("RGB", size, (30, 60, 90))
        draw = ImageDraw.Draw(img)
        x = i * size[0] // (GOP_S * RATE)
        draw.rectangle((x, size[1] // 3, x + size[0] // 8, 2 * size[1] // 3), fill=(220, 190, 40))
        frames.append(img)
    return frames


def _template(size: tuple[int, int], workdir: Path) -> tuple[list[bytes], list[bytes]]:
    """Two seconds of video (one closed GOP, no B-frames) and of AAC audio, as packets,
    from a file encoded once."""
    path = workdir / f"template-{size[1]}p.mp4"
    if not path.exists():
        with av.open(str(path), "w") as out:
            v = out.add_stream("libx264", rate=RATE)
            v.width, v.height, v.pix_fmt = size[0], size[1], "yuv420p"
            v.options = {"preset": "ultrafast", "crf": "35", "bf": "0", "g": str(GOP_S * RATE)}
            a = out.add_stream("aac", rate=AUDIO_RATE)
            a.layout = "stereo"
            for img in _frames(size):
                out.mux(v.encode(av.VideoFrame.from_image(img)))
            out.mux(v.encode(None))
            silence = bytes(1024 * 2 * 2)
            for n in range(GOP_S * AUDIO_RATE // 1024):
                frame = av.AudioFrame(format="s16", layout="stereo", samples=1024)
                frame.planes[0].update(silence)
                frame.sample_rate, frame.pts = AUDIO_RATE, n * 1024
                out.mux(a.encode(frame))
            out.mux(a.encode(None))
    with av.open(str(path)) as src:
        video = [bytes(p) for p in src.demux(src.streams.video[0]) if p.size]
    with av.open(str(path)) as src:
        audio = [bytes(p) for p in src.demux(src.streams.audio[0]) if p.size]
    return video, audio


def _clip(path: Path, size: tuple[int, int], seconds: int, seed: int, workdir: Path) -> None:
    """One clip made of the size's template packets, with its own tags."""
    video, audio = _template(size, workdir)
    rnd = random.Random(seed)
    lat, lon = 32.5 + rnd.random() * 4, 35.8 + rnd.random() * 6
    apple = seed % 2 == 0
    day = f"2014-{1 + seed % 12:02d}-{1 + seed % 28:02d}T{seed % 24:02d}:15:00"
    if apple:
        tags = {
            "com.apple.quicktime.location.ISO6709": f"{lat:+08.4f}{lon:+09.4f}+{seed:03d}.000/",
            "com.apple.quicktime.make": "Apple",
            "com.apple.quicktime.model": f"iPhone {8 + seed % 8}",
            "com.apple.quicktime.creationdate": f"{day}+0300",
        }
        fmt, options = "mov", {"movflags": "use_metadata_tags"}
    else:
        tags = {"location": f"{lat:+08.4f}{lon:+09.4f}/", "creation_time": f"{day}Z"}
        fmt, options = "mp4", {}
    with (
        av.open(str(workdir / f"template-{size[1]}p.mp4")) as src,
        av.open(str(path), "w", format=fmt, options=options) as out,
    ):
        out.metadata.update(tags)
        v = out.add_stream_from_template(src.streams.video[0])
        a = out.add_stream_from_template(src.streams.audio[0])
        if seed % 3 == 0:
            v.set_display_rotation(-90)  # portrait, stored sideways
        per_gop = len(video)
        audio_tb, video_tb = Fraction(1, AUDIO_RATE), Fraction(1, RATE)
        for gop in range(seconds // GOP_S):
            for n, body in enumerate(video):
                p = av.Packet(body)
                p.stream, p.time_base = v, video_tb
                p.pts = p.dts = gop * per_gop + n
                p.duration, p.is_keyframe = 1, n == 0
                out.mux(p)
            for n, body in enumerate(audio):
                p = av.Packet(body)
                p.stream, p.time_base = a, audio_tb
                p.pts = p.dts = (gop * len(audio) + n) * 1024
                p.duration = 1024
                out.mux(p)


def make_clips(count: int) -> list[Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    clips = []
    for i in range(count):
        size = SIZES[i % 2]
        seconds = 10 + (i * 37) % 51 // GOP_S * GOP_S
        path = OUT / f"clip-{i:03d}-{size[1]}p-{seconds}s.{'mov' if i % 2 == 0 else 'mp4'}"
        if not path.exists():
            _clip(path, size, seconds, i, OUT)
        clips.append(path)
    return clips


def floor(path: Path) -> None:
    """PyAV's bare probe and the first video frame's decode."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_type = "SLICE"
        for packet in container.demux(stream):
            if packet.stream.decode(packet):
                break


def best(repeat: int, clips: list[Path], call) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for path in clips:
            call(path)
        times.append(time.perf_counter() - start)
    return min(times)


def make_large(path: Path, gigabytes: float) -> None:
    """1080p intra frames of noise (a few MB each), eight encoded and repeated."""
    with av.open(str(path), "w", format="mp4") as out:
        v = out.add_stream("libx264", rate=25, options={"crf": "0", "preset": "ultrafast"})
        v.width, v.height, v.pix_fmt = 1920, 1080, "yuv420p"
        v.codec_context.gop_size = 1
        noise = [Image.effect_noise((1920, 1080), 90 + i).convert("RGB") for i in range(8)]
        bodies = [bytes(p) for img in noise for p in v.encode(av.VideoFrame.from_image(img))]
        bodies += [bytes(p) for p in v.encode(None)]
        written = n = 0
        while written < gigabytes * (1 << 30):
            body = bodies[n % len(bodies)]
            p = av.Packet(body)
            p.stream, p.time_base = v, Fraction(1, 25)
            p.pts = p.dts = n
            p.duration, p.is_keyframe = 1, True
            out.mux(p)
            written += len(body)
            n += 1


_PEAK = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from evidence.media.video import describe_video

def peak():
    status = Path("/proc/self/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("VmHWM")).split()[1]) << 10

describe_video(sys.argv[2])
Path("/proc/self/clear_refs").write_text("5")
resident = peak()
desc = describe_video(sys.argv[1])
print(peak(), resident, desc.duration_s, len(desc.problems))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-gb", type=float, default=0.5)
    args = parser.parse_args()

    start = time.perf_counter()
    clips = make_clips(args.clips)
    total_mb = sum(p.stat().st_size for p in clips) / (1 << 20)
    print(f"{len(clips)} clips ({total_mb:.0f} MB) ready in {time.perf_counter() - start:.1f} s")
    for path in clips[:3]:
        d = describe_video(str(path))
        v = d.main_video
        shown = f"{v.display_width}x{v.display_height}" if v else "-"
        print(f"  {path.name}: {d.duration_s} s, {shown}, {d.make or '-'} {d.model or '-'}, "
              f"{d.gps}, {d.created_at}, {d.problems}")  # fmt: skip
    floor_s = best(args.repeat, clips, floor)
    describe_s = best(args.repeat, clips, lambda p: describe_video(str(p)))
    ratio = describe_s / floor_s
    print(f"describe: {describe_s * 1000 / len(clips):.2f} ms a clip; "
          f"floor (probe + first frame): {floor_s * 1000 / len(clips):.2f} ms; "
          f"ratio {ratio:.2f} (goal <= 1.3)")  # fmt: skip

    large = OUT / f"large-{args.large_gb:g}gb.mp4"
    start = time.perf_counter()
    make_large(large, args.large_gb)
    large_mb = large.stat().st_size / (1 << 20)
    print(f"large file: {large_mb:,.0f} MB made in {time.perf_counter() - start:.1f} s")
    try:
        run = subprocess.run(
            [sys.executable, "-c", _PEAK, str(large), str(clips[0]), str(ROOT)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    finally:
        large.unlink()
    peak, resident, duration, problems = run.stdout.split()
    peak_mb = int(peak) / (1 << 20)
    print(f"  described ({duration} s, {problems} problems): peak resident {peak_mb:.0f} MB, "
          f"{(int(peak) - int(resident)) / (1 << 20):.0f} MB above the warmed process "
          f"(goal < 300 MB)")  # fmt: skip
    print(
        f"clips={len(clips)} describe_s={describe_s:.3f} floor_s={floor_s:.3f} "
        f"ratio={ratio:.2f} rate_per_s={len(clips) / describe_s:.0f} "
        f"large_mb={large_mb:.0f} peak_mb={peak_mb:.0f}"
    )


if __name__ == "__main__":
    main()
