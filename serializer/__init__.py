"""The aot image format: a versioned msgpack container of separately checksummed record tables.

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [["pkg.mod:f", "ab12"]]})
    read_image(p)  ->  Image(path=p, header={"compiler_version": "0.1.0"},
                             tables={"methods": [["pkg.mod:f", "ab12"]]})
    open_image(p).table("methods")  ->  [["pkg.mod:f", "ab12"]]   (only that table checked and decoded)

See ``serializer.image`` for the byte layout and ``serializer.records`` for the
append-only record rule.  Nothing here unpickles; every malformed file is an ImageError.
"""

from serializer import image as _image
from serializer.image import (FORMAT_VERSION, MAGIC, OFFSETS, PREAMBLE_SIZE, Image, ImageError, ImageFile, Records,
                              decode_image, encode_image, open_image, read_header, read_image, write_image)
from serializer.records import RecordError, RecordSchema, record

__all__ = [*_image.__all__, "RecordError", "RecordSchema", "record"]
