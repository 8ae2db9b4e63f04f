"""Timed ID3 in MPEG-TS, as HLS broadcasters send what is on air (for the stream tests).

`with_timed_id3(segment, tags)` takes an MPEG-TS segment as ffmpeg writes it (PAT, PMT, one AAC
stream) and returns it with a timed-metadata elementary stream added: its PMT lists stream type
0x15 on PID 0x102 with a registration descriptor "ID3 " (what FFmpeg's mpegts demuxer exposes as a
data stream of codec timed_id3), and each (pts, tag, wrapped) of `tags` is a PES (stream id 0xBD,
a PTS on the 90 kHz clock) on that PID, placed before the first audio packet whose PES starts at or
after its time. `wrapped`: the tag follows H.222.0's 5-byte metadata access unit header (2.12.4),
which FFmpeg's demuxer expects for stream type 0x15 and takes off; else the PES holds the bare tag,
as Apple's timed-metadata note shows it (FFmpeg 5.1 then takes off the tag's first 5 bytes).
`first_audio_pts(segment)` is the PTS of the segment's first audio PES.

ffmpeg 5.1 cannot make this itself (its muxer takes a timed_id3 stream only from an input that
has one), so the packets are written here, by the rules of ISO/IEC 13818-1: 188-byte packets,
the PMT section's CRC-32 (MPEG-2's), PES headers, adaptation-field stuffing.
"""

from __future__ import annotations

PACKET = 188
ID3_PID = 0x102


def crc32_mpeg2(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def _pid(packet: bytes) -> int:
    return (packet[1] & 0x1F) << 8 | packet[2]


def _payload_start(packet: bytes) -> int:
    control = packet[3] >> 4 & 0x3
    return 5 + packet[4] if control == 0x3 else 4


def _pes_pts(payload: bytes) -> int | None:
    if len(payload) < 14 or payload[:3] != b"\x00\x00\x01" or not payload[7] & 0x80:
        return None
    p = payload[9:14]
    return ((p[0] >> 1) & 0x07) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1


def _pmt_pid(packets: list[bytes]) -> int:
    for packet in packets:
        if _pid(packet) == 0 and packet[1] & 0x40:
            start = _payload_start(packet)
            section = packet[start + 1 + packet[start]:]
            return (section[10] & 0x1F) << 8 | section[11]  # the first program's PMT PID
    raise ValueError("no PAT in the segment")


def _audio_pid(pmt_section: bytes) -> int:
    info = (pmt_section[10] & 0x0F) << 8 | pmt_section[11]
    return (pmt_section[12 + info + 1] & 0x1F) << 8 | pmt_section[12 + info + 2]


def _with_id3_stream(packet: bytes) -> bytes:
    """The PMT packet with the timed-ID3 stream added to its elementary streams."""
    start = _payload_start(packet)
    pointer = packet[start]
    section = packet[start + 1 + pointer:]
    length = (section[1] & 0x0F) << 8 | section[2]
    body = section[3:3 + length - 4]  # without its CRC
    descriptor = b"\x05\x04ID3 "
    entry = bytes([0x15, 0xE0 | ID3_PID >> 8, ID3_PID & 0xFF, 0xF0, len(descriptor)]) + descriptor
    body = body + entry
    new_length = len(body) + 4
    head = bytes([section[0], (section[1] & 0xF0) | new_length >> 8, new_length & 0xFF])
    new_section = head + body
    new_section += crc32_mpeg2(new_section).to_bytes(4, "big")
    out = packet[:start] + bytes([pointer]) + packet[start + 1:start + 1 + pointer] + new_section
    if len(out) > PACKET:
        raise ValueError("the PMT does not fit one packet")
    return out + b"\xFF" * (PACKET - len(out))


def _pes_packets(tag: bytes, pts: int, wrapped: bool, counter: int) -> tuple[list[bytes], int]:
    """`tag` as one PES with `pts` on ID3_PID, in TS packets from continuity counter `counter`."""
    if wrapped:
        # metadata_service_id 0, sequence_number, cell_fragment_indication '11' (the whole unit),
        # decoder_config_flag 0, random_access_indicator 1, reserved '1111', AU_cell_data_length.
        tag = bytes([0, counter, 0xDF]) + len(tag).to_bytes(2, "big") + tag
    pts &= (1 << 33) - 1
    stamp = bytes([0x21 | (pts >> 29 & 0x0E), pts >> 22 & 0xFF, 0x01 | (pts >> 14 & 0xFE), pts >> 7 & 0xFF,
                   0x01 | (pts << 1 & 0xFE)])
    header = bytes([0x80 | 0x04, 0x80, len(stamp)]) + stamp  # data aligned, a PTS
    pes = b"\x00\x00\x01\xBD" + (len(header) + len(tag)).to_bytes(2, "big") + header + tag
    packets = []
    first = True
    while pes:
        chunk, pes = pes[:184], pes[184:]
        head = bytes([0x47, (0x40 if first else 0) | ID3_PID >> 8, ID3_PID & 0xFF])
        if len(chunk) < 184:
            # Stuffing in an adaptation field fills the last packet.
            stuffing = 184 - len(chunk) - 1
            field = bytes([stuffing]) + (bytes([0x00]) + b"\xFF" * (stuffing - 1) if stuffing > 0 else b"")
            packets.append(head + bytes([0x30 | counter]) + field + chunk)
        else:
            packets.append(head + bytes([0x10 | counter]) + chunk)
        counter = (counter + 1) & 0x0F
        first = False
    return packets, counter


def first_audio_pts(segment: bytes) -> int:
    packets = [segment[i:i + PACKET] for i in range(0, len(segment) - PACKET + 1, PACKET)]
    pmt = _pmt_pid(packets)
    audio = None
    for packet in packets:
        start = _payload_start(packet)
        if _pid(packet) == pmt and packet[1] & 0x40 and audio is None:
            audio = _audio_pid(packet[start + 1 + packet[start]:])
        elif audio is not None and _pid(packet) == audio and packet[1] & 0x40:
            pts = _pes_pts(packet[start:])
            if pts is not None:
                return pts
    raise ValueError("no audio PES with a PTS in the segment")


def with_timed_id3(segment: bytes, tags: list[tuple[int, bytes, bool]]) -> bytes:
    packets = [segment[i:i + PACKET] for i in range(0, len(segment) - PACKET + 1, PACKET)]
    pmt = _pmt_pid(packets)
    waiting = sorted(tags, key=lambda item: item[0])
    counter = 0
    audio = None
    out = []
    for packet in packets:
        start = _payload_start(packet)
        if _pid(packet) == pmt and packet[1] & 0x40:
            if audio is None:
                audio = _audio_pid(packet[start + 1 + packet[start]:])
            out.append(_with_id3_stream(packet))
            continue
        if audio is not None and _pid(packet) == audio and packet[1] & 0x40:
            pts = _pes_pts(packet[start:])
            while waiting and pts is not None and pts >= waiting[0][0]:
                pes, counter = _pes_packets(waiting[0][1], waiting[0][0], waiting[0][2], counter)
                out += pes
                waiting.pop(0)
        out.append(packet)
    for at, tag, wrapped in waiting:
        pes, counter = _pes_packets(tag, at, wrapped, counter)
        out += pes
    return b"".join(out)
