"""Who is taking a batch in: a claim by host, process and start time, and its lease."""

from __future__ import annotations

import os
import re
import socket
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from ..models import (
    IntakeBatch,
)

LEASE = timedelta(minutes=2)


def _start_time(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from /proc), "" where unknown:
    with its pid it names one process, not a later one given the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (command) "
    return fields[19] if len(fields) > 19 else ""  # field 22 of stat: starttime


def _owner() -> str:
    """Who claims a batch: this host, this process and when it started."""
    pid = os.getpid()
    start = _start_time(pid)
    return f"{socket.gethostname()}:{pid}" + (f"@{start}" if start else "")


_OWNER = re.compile(r"(?P<host>.*):(?P<pid>[0-9]+)(?:@(?P<start>[0-9]+))?")


def _owner_alive(owner: str) -> bool:
    """False only when the owner is known dead: a process of this host that is gone, or
    whose pid now belongs to a process started later (the pid was reused)."""
    match = _OWNER.fullmatch(owner)
    if match is None or match["host"] != socket.gethostname():
        return True  # another machine: trust its lease
    pid = int(match["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if match["start"] and (start := _start_time(pid)) and start != match["start"]:
        return False  # the pid now names another process
    return True


def owner_known_dead(owner: str) -> bool:
    """Whether a batch's claim was left by a process of this host that is no longer
    running: its batch can be taken over at once, however fresh its heartbeat."""
    match = _OWNER.fullmatch(owner)
    return match is not None and match["host"] == socket.gethostname() and not _owner_alive(owner)


def claim_batch(batch: IntakeBatch) -> bool:
    """Take the batch for this process with a conditional update; False if someone has it.

    A batch whose owner died (killed mid-way) or whose lease ran out can be taken over.
    """
    now = timezone.now()
    fresh = IntakeBatch.objects.filter(pk=batch.pk).values("claimed_by", "heartbeat_at").get()
    owner = fresh["claimed_by"]
    match = _OWNER.fullmatch(owner)
    if match is not None and match["host"] == socket.gethostname():
        # a process here holds it for as long as it lives
        held = owner != _owner() and _owner_alive(owner)
    else:  # another machine holds it while its heartbeat is fresh
        held = bool(owner) and bool(fresh["heartbeat_at"] and fresh["heartbeat_at"] > now - LEASE)
    if held:
        return False
    taken = IntakeBatch.objects.filter(
        pk=batch.pk, claimed_by=fresh["claimed_by"], heartbeat_at=fresh["heartbeat_at"]
    ).update(claimed_by=_owner(), heartbeat_at=now, status=IntakeBatch.Status.RUNNING)
    return taken == 1


def release_batch(batch: IntakeBatch) -> None:
    """Give back a batch this process claimed and will not take in after all, as it was
    before the claim (``batch`` as read then)."""
    IntakeBatch.objects.filter(pk=batch.pk, claimed_by=_owner()).update(
        claimed_by=batch.claimed_by, heartbeat_at=batch.heartbeat_at, status=batch.status
    )
