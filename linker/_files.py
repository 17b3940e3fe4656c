"""The linker writes its outputs atomically, like images, and works in folders a later run can tell are
stale (``serializer.files``)."""

from serializer.files import atomic_write_bytes, remove_stale_work_folders, work_folder

__all__ = ["atomic_write_bytes", "remove_stale_work_folders", "work_folder"]
