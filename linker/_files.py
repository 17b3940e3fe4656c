"""The linker writes its outputs atomically, like images (``serializer.files``)."""
from serializer.files import atomic_write_bytes

__all__ = ["atomic_write_bytes"]
