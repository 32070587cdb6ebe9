"""A metric's source as a form gives it: pasted in the textarea, or a .py file chosen beside it (the file wins)."""

from __future__ import annotations

from typing import Any

from litestar.datastructures import UploadFile

from domain.custom_metric_commands import MAX_SOURCE_CHARACTERS
from domain.errors import SettingsInvalid

NOT_UTF8 = "The file is not UTF-8 text: save the metric as UTF-8 and upload it again."


def source_from_form(form: dict[str, Any]) -> str:
    upload = form.get("source_file")
    if isinstance(upload, UploadFile) and upload.filename:
        raw = upload.file.read(MAX_SOURCE_CHARACTERS * 4 + 1)  # UTF-8 takes at most 4 bytes a character
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SettingsInvalid({"source": NOT_UTF8}) from None
    text = form.get("source")
    return text if isinstance(text, str) else ""
