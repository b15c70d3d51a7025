"""``BinlogDecoder.decode_event`` (one whole event, as a replication packet holds it) against
the decoder reading the same file: the same events, headers, offsets and frames.

Every intact v4 corpus file is cut into events by the header walk of
:mod:`corpus_walk` (the ``event_size`` fields), and each event is given to a
decoder on its own, at its offset, as the stream decoder does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_walk import corpus_files, damage_of, decode_up_to_damage, header_length, read, walk

from binlogkit import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import Signal

FILES = [name for name in corpus_files() if header_length(name) == 19]


def _frame_key(dec: BinlogDecoder) -> tuple[object, ...] | None:
    frame = dec.last_frame
    if frame is None:
        return None
    return (frame.raw, frame.fmt, frame.checksum_length, frame.header, frame.header.offset)


def _key(event: Event) -> tuple[object, ...]:
    return (event, event.header.offset, event.header.file)


@pytest.mark.parametrize("name", FILES)
def test_decode_event_gives_what_the_file_decoder_gives(corpus_dir: Path, name: str) -> None:
    if damage_of(name) is not None:
        pytest.skip("damaged file: its damage is the framer's business")
    reference = BinlogDecoder(file=name)
    expected = []
    for event, _ in decode_up_to_damage(name, reference):
        expected.append((_key(event), _frame_key(reference)))
    data = read(name)
    dec = BinlogDecoder(file=name, expect_magic=False)
    got = []
    for walked in walk(data).events:
        raw = data[walked.offset : walked.end]
        event = dec.decode_event(raw, walked.offset, name)
        while not isinstance(event, Signal):
            got.append((_key(event), _frame_key(dec)))
            event = dec.next_event()
    assert got == expected
