"""Exit 0 when the PostgreSQL server named by the URL in argv[1] accepts a connection."""

import sys

import psycopg


def main(url: str) -> int:
    # Connect to the maintenance database: the named one may not exist yet.
    base, _, _name = url.rpartition("/")
    try:
        psycopg.connect(f"{base}/postgres", connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        print(f"PostgreSQL unreachable: {exc}".strip(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
