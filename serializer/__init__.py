"""The aot image format: a versioned msgpack container of separately checksummed record tables.

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [["pkg.mod:f", "ab12"]]})
    read_image(p)  ->  Image(path=p, header={"compiler_version": "0.1.0"},
                             tables={"methods": [["pkg.mod:f", "ab12"]]})
    open_image(p).table("methods")  ->  [["pkg.mod:f", "ab12"]]   (only that table checked and decoded)

See ``serializer.image`` for the byte layout and ``serializer.records`` for the
append-only record rule.  Nothing here unpickles; every malformed file is an ImageError.
"""

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "PREAMBLE_SIZE",
    "Image",
    "ImageError",
    "ImageFile",
    "RecordError",
    "RecordSchema",
    "decode_image",
    "encode_image",
    "open_image",
    "read_header",
    "read_image",
    "record",
    "write_image",
]

_HOME = {"RecordError": "records", "RecordSchema": "records", "record": "records"}


def __getattr__(name: str):
    """Names load their module when first used: a reader of images (every import of a package with one)
    never loads what only writers need."""
    if name not in __all__:
        raise AttributeError(f"module 'serializer' has no attribute {name!r}")
    import importlib
    module = importlib.import_module(f"serializer.{_HOME.get(name, 'image')}")
    value = getattr(module, name)
    globals()[name] = value
    return value
