import base64
import json
import re
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from casefiles import checkpoints, services
from casefiles.audit import verify_log


class Command(BaseCommand):
    help = (
        "Walk the audit chain, then check every append-only row it binds (custody events, "
        "testimony versions, review decisions, consent, protection changes); exit 0 when "
        "whole, 1 naming the first broken seq or each deleted, altered or unbound row. With "
        "--checkpoint, also check that the log still matches a published checkpoint "
        "(nothing at or before it changed or vanished); with --entry, prove one entry's "
        "inclusion in it."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--checkpoint",
            type=Path,
            help="a published checkpoint: its checkpoint.json, the folder audit_checkpoint "
            "wrote it to, or a folder of such folders (the newest is checked)",
        )
        parser.add_argument(
            "--public-key",
            type=Path,
            help="the PEM public key to trust (default: this server's checkpoint key)",
        )
        parser.add_argument("--entry", type=int, help="seq of an entry to prove inclusion of")

    def handle(self, *args, **options):
        report, rows = verify_log()
        if not report.ok:
            raise CommandError(report.summary(), returncode=1)
        if rows is None:  # verify_log checks the rows only once the chain is whole
            raise CommandError(report.summary(), returncode=1)
        if not rows.ok:
            raise CommandError(f"{report.summary()}\n{rows.summary()}", returncode=1)
        self.stdout.write(f"{report.summary()}; {rows.summary()}; {self._check_age()}")
        if options["checkpoint"]:
            self._check_checkpoint(options)
        elif options["entry"] is not None:
            raise CommandError("--entry needs --checkpoint")

    def _check_age(self) -> str:
        """The newest checkpoint's age, for the summary line. Entries after it can be
        deleted without a trace (decision 0025): in production, a log left unsigned past
        the window fails."""
        age = services.checkpoint_age()
        window = timedelta(minutes=settings.ATHAR_CHECKPOINT_MAX_AGE_MINUTES)
        if not age.overdue(window):
            return age.summary()
        message = (
            f"{age.summary()}: more than ATHAR_CHECKPOINT_MAX_AGE_MINUTES "
            f"({settings.ATHAR_CHECKPOINT_MAX_AGE_MINUTES}) without a checkpoint. Entries "
            "after the last checkpoint could have been removed unseen; is the schedule "
            "running (manage.py checkpoint_schedule and db_worker)?"
        )
        if settings.PRODUCTION:
            raise CommandError(f"checkpoint OVERDUE: {message}", returncode=1)
        self.stderr.write(f"warning: {message}")
        return age.summary()

    def _fail(self, message):
        raise CommandError(f"checkpoint FAILED: {message}", returncode=1)

    def _checkpoint_file(self, path: Path) -> Path:
        """The checkpoint.json a path names: the file itself, the folder that
        audit_checkpoint printed (``checkpoint-<size>/``, or ``latest``), or a folder of
        such folders, whose largest checkpoint is taken."""
        if not path.is_dir():
            return path
        if (path / "checkpoint.json").is_file():
            return path / "checkpoint.json"
        sizes = [
            (int(child.name.removeprefix("checkpoint-")), child)
            for child in path.iterdir()
            if re.fullmatch(r"checkpoint-[0-9]{1,18}", child.name)
            and (child / "checkpoint.json").is_file()
        ]
        if not sizes:
            self._fail(f"no checkpoint.json in {path} nor in a checkpoint-<size> folder of it")
        chosen = max(sizes)[1] / "checkpoint.json"
        self.stdout.write(f"checking the newest checkpoint there: {chosen}")
        return chosen

    def _check_checkpoint(self, options):
        source = self._checkpoint_file(options["checkpoint"])
        try:
            data = json.loads(source.read_text())
            signed = checkpoints.SignedCheckpoint.parse(data["signed_text"])
            signature = base64.b64decode(data["signature"], validate=True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._fail(f"unreadable checkpoint file ({exc})")
        if options["public_key"]:
            trusted = checkpoints.load_public_key(options["public_key"].read_text())
        else:
            trusted = checkpoints.signing_key().public_key()
        if not checkpoints.check_signature(data["signed_text"], signature, trusted):
            self._fail("the signature does not verify with the trusted public key")
        leaves = checkpoints.stored_leaves()
        if len(leaves) < signed.size:
            self._fail(f"the log has {len(leaves)} entries, fewer than the {signed.size} signed")
        _, root = checkpoints.root_of(leaves[: signed.size])
        if root != signed.root:
            self._fail(
                f"entries 1..{signed.size} no longer hash to the signed root "
                "(an entry was changed, removed or reordered)"
            )
        size, current = checkpoints.root_of(leaves)
        proof = checkpoints.consistency_proof(leaves, signed.size, size)
        if not checkpoints.verify_consistency(signed.size, size, signed.root, current, proof):
            self._fail("the consistency proof to the current log does not verify")
        self.stdout.write(
            f"checkpoint OK: {signed.origin} size {signed.size} root {signed.root.hex()} "
            f"is a prefix of the current log (size {size}, root {current.hex()})"
        )
        self.stdout.write(
            json.dumps(
                {
                    "consistency": {
                        "old_size": signed.size,
                        "new_size": size,
                        "new_root": current.hex(),
                        "proof": [p.hex() for p in proof],
                    }
                }
            )
        )
        seq = options["entry"]
        if seq is not None:
            if not 1 <= seq <= signed.size:
                self._fail(f"entry {seq} is not covered by a checkpoint of size {signed.size}")
            path = checkpoints.inclusion_proof(leaves, seq - 1, signed.size)
            if not checkpoints.verify_inclusion(
                leaves[seq - 1], seq - 1, signed.size, path, signed.root
            ):
                self._fail(f"the inclusion proof of entry {seq} does not verify")
            self.stdout.write(f"entry {seq} is included (hash {leaves[seq - 1].hex()})")
            self.stdout.write(
                json.dumps(
                    {
                        "inclusion": {
                            "seq": seq,
                            "leaf_index": seq - 1,
                            "tree_size": signed.size,
                            "entry_hash": leaves[seq - 1].hex(),
                            "proof": [p.hex() for p in path],
                        }
                    }
                )
            )
