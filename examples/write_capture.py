"""Write one HTTP capture (response + request + metadata) into a new WARC file.

Usage: python examples/write_capture.py OUTDIR
The writer puts the warcinfo record first, fills WARC-Record-ID/WARC-Date/digests,
links the records with WARC-Concurrent-To and renames FILE.warc.gz.open on close.
"""

import sys

from webark.warc.builders import MetadataFields, WarcinfoFields
from webark.warc.writer import WarcWriter

response = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n0\r\n\r\n")
request = b"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"
info = WarcinfoFields.for_this_host(operator="Web Archive Team <webarchive@example.org>")

with WarcWriter(sys.argv[1], prefix="DEMO", warcinfo=info) as writer:
    records = writer.builder.exchange(
        "http://example.org/", response, request, ip_address="192.0.2.1",
        metadata=MetadataFields(via="http://example.org/seeds", hops_from_seed="L"))
    for rec in writer.write(*records):
        print(f"{rec.type:9} offset {rec.offset:5} length {rec.length}")
print("written:", *writer.paths)
