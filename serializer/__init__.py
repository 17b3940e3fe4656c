"""The aot image format: a versioned, checksummed msgpack container of positional records.

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [["pkg.mod:f", "ab12"]]})
    read_image(p)  ->  Image(path=p, header={"compiler_version": "0.1.0"},
                             tables={"methods": [["pkg.mod:f", "ab12"]]})

See ``serializer.image`` for the byte layout and ``serializer.records`` for the
append-only record rule.  Nothing here unpickles; every malformed file is an ImageError.
"""

from serializer.image import (
    FORMAT_VERSION,
    MAGIC,
    PREAMBLE_SIZE,
    Image,
    ImageError,
    decode_image,
    encode_image,
    read_header,
    read_image,
    write_image,
)
from serializer.records import RecordError, RecordSchema, record

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "PREAMBLE_SIZE",
    "Image",
    "ImageError",
    "RecordError",
    "RecordSchema",
    "decode_image",
    "encode_image",
    "read_header",
    "read_image",
    "record",
    "write_image",
]
