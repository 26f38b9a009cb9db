"""manage.py witness cosign: cosign a checkpoint as a witness (C2SP tlog-cosignature), for
a partner organisation or a court that runs Athar. The same function as the bag's
``python3 verify.py cosign``, with the same arguments; here the signature is made with
``cryptography`` (constant-time), which gives the same bytes (Ed25519 is deterministic)."""

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management.base import BaseCommand, CommandError

from disclosure import verifier


def sign(seed: bytes, message: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).sign(message)


class Command(BaseCommand):
    help = (
        "Witness a log: 'cosign' checks a checkpoint's signature with the log's key, checks "
        "that it extends the last checkpoint this witness cosigned (never back, never two "
        "roots for one size), records it and prints the cosignature line."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        cosign = actions.add_parser(
            "cosign", help="cosign a checkpoint (a package's folder, or a published one)"
        )
        verifier.add_cosign_arguments(cosign)

    def handle(self, *args, action: str, **options):
        try:
            line, checked = verifier.cosign_from(options, sign=sign)
        except verifier.Failure as exc:
            raise CommandError(f"REFUSED: {exc}") from None
        self.stderr.write(checked)
        self.stdout.write(line)
