"""What an error's words say of its kind: a status code only where it reads as one."""

from __future__ import annotations

import pytest

from moot.models.classify import classify_message
from moot.types import FailureKind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[API Error: 429 Too Many Requests] Quota exceeded", FailureKind.RATE_LIMIT),
        ("stream error: exceeded retry limit, last status: 429", FailureKind.RATE_LIMIT),
        ('{"error": {"code": 429}}', FailureKind.RATE_LIMIT),
        ("unexpected status 401 Unauthorized", FailureKind.AUTH),
        ("HTTP 403", FailureKind.AUTH),
        ("status code 403", FailureKind.AUTH),
        ('API Error: 529 {"type":"error"}', FailureKind.SERVER),
        ("Error code: 503", FailureKind.SERVER),
        ("got status: 500", FailureKind.SERVER),
        ("502 Bad Gateway", FailureKind.SERVER),
        ("503 Service Unavailable", FailureKind.SERVER),
    ],
)
def test_a_status_in_an_error_names_its_kind(text: str, kind: FailureKind) -> None:
    assert classify_message(text) is kind


@pytest.mark.parametrize(
    "text",
    [
        # a coding CLI's traceback run under pytest's numbered temporary folders: the folder
        # "pytest-504" read as a gateway timeout, so the crash was retried as an outage
        'File "/tmp/pytest-of-root/pytest-504/test_x/bin/editor", line 16, in <module>\n'
        "FileNotFoundError: [Errno 2] No such file or directory: 'calc.py'",
        'File "tool.py", line 512, in main',
        "wrote 401 files, skipped 429",
    ],
)
def test_a_number_that_is_no_status_names_no_kind(text: str) -> None:
    assert classify_message(text) is None
