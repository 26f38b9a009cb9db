import pytest

from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes


@pytest.fixture
def photos(cast, tmp_path):
    files = {f"p{n}.jpg": jpeg_bytes(n) for n in range(3)}
    return list(take_in(cast.case, cast.investigator, files, tmp_path / "m").items.order_by("pk"))
