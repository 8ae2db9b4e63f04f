import ReelStreamFormats
import Testing

/// ID3v2 tags as stations send them in HLS timed metadata, built byte by byte.
enum ID3Bytes {
    static func syncsafe(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }

    static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// One frame of an ID3v2.`version` tag.
    static func frame(_ id: String, _ content: [UInt8], version: UInt8 = 4, flags: [UInt8] = [0, 0]) -> [UInt8] {
        Array(id.utf8) + (version == 4 ? syncsafe(content.count) : bigEndian(content.count)) + flags + content
    }

    /// A text frame's content: the encoding byte, then the text.
    static func text(_ text: String, encoding: UInt8 = 3) -> [UInt8] {
        switch encoding {
        case 0: return [0] + text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        case 1: return [1, 0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        case 2: return [2] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        default: return [encoding] + Array(text.utf8)
        }
    }

    static func tag(_ frames: [UInt8], version: UInt8 = 4, flags: UInt8 = 0) -> [UInt8] {
        Array("ID3".utf8) + [version, 0, flags] + syncsafe(frames.count) + frames
    }

    /// Unsynchronisation: a 0x00 after every 0xFF.
    static func unsynchronised(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { $0 == 0xFF ? [0xFF, 0x00] : [$0] }
    }
}

@Suite struct ID3OnAirTests {
    typealias B = ID3Bytes

    @Test func tit2AloneIsTheTitle() throws {
        let onAir = try ID3OnAir(tag: B.tag(B.frame("TIT2", B.text("On Air"))) + [0xFF, 0xF1])
        #expect(onAir == ID3OnAir(title: "On Air"))
        #expect(onAir.streamTitle == "On Air")
    }

    @Test func tpe1AndTit2AreArtistDashTitle() throws {
        for version: UInt8 in [3, 4] {
            let frames = B.frame("TPE1", B.text("Nina Simone", encoding: 0), version: version)
                + B.frame("TIT2", B.text("Feeling Good", encoding: 1), version: version)
            let onAir = try ID3OnAir(tag: B.tag(frames, version: version))
            #expect(onAir.streamTitle == "Nina Simone - Feeling Good", "v2.\(version)")
        }
        // An artist without a title is no title.
        #expect(try ID3OnAir(tag: B.tag(B.frame("TPE1", B.text("Someone")))).streamTitle == nil)
    }

    @Test func everyTextEncodingIsRead() throws {
        for encoding: UInt8 in 0...3 {
            let title = encoding == 0 ? "Café Müller" : "Café Müller – 東京"
            let onAir = try ID3OnAir(tag: B.tag(B.frame("TIT2", B.text(title, encoding: encoding))))
            #expect(onAir.title == title, "encoding \(encoding)")
        }
        // UTF-16 big-endian with its byte order mark, and a NUL-ended string.
        let bigEndian: [UInt8] = [1, 0xFE, 0xFF, 0, 0x48, 0, 0x69, 0, 0]
        #expect(try ID3OnAir(tag: B.tag(B.frame("TIT2", bigEndian))).title == "Hi")
        #expect(throws: StreamFormatError.self) { try ID3OnAir(tag: B.tag(B.frame("TIT2", [7, 65]))) }
    }

    @Test func txxxTitleWhenThereIsNoTit2() throws {
        let body: [UInt8] = [0] + Array("StreamTitle".utf8) + [0] + Array("Other".utf8)
        #expect(try ID3OnAir(tag: B.tag(B.frame("TXXX", body, version: 3), version: 3)).title == "Other")
        let both = B.frame("TXXX", body) + B.frame("TIT2", B.text("Named"))
        #expect(try ID3OnAir(tag: B.tag(both)).title == "Named")
    }

    @Test func otherFramesAndPaddingAreSkipped() throws {
        let priv = Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0, 0, 0, 0, 0, 0, 1, 0x5F, 0x90]
        let frames = B.frame("PRIV", priv) + B.frame("TIT2", B.text("After PRIV")) + [UInt8](repeating: 0, count: 40)
        #expect(try ID3OnAir(tag: B.tag(frames)).title == "After PRIV")
        // Only a timestamp: no title, no error.
        #expect(try ID3OnAir(tag: B.tag(B.frame("PRIV", priv))).streamTitle == nil)
    }

    @Test func version3UnsynchronisesTheWholeTag() throws {
        // A UTF-16 title whose bytes hold 0xFF: unsynchronised, each 0xFF is followed by 0x00.
        let frames = B.frame("TIT2", B.text("ÿes", encoding: 1), version: 3)
        let tag = B.tag(B.unsynchronised(frames), version: 3, flags: 0x80)
        #expect(try ID3OnAir(tag: tag).title == "ÿes")
    }

    @Test func version4UnsynchronisesByFrameOrByTag() throws {
        let content = B.unsynchronised(B.text("ÿes", encoding: 1))
        // The frame's own flag (with a data length indicator, as 2.4 asks).
        let flagged = B.frame("TIT2", B.syncsafe(B.text("ÿes", encoding: 1).count) + content, flags: [0, 0x03])
        #expect(try ID3OnAir(tag: B.tag(flagged)).title == "ÿes")
        // The tag's flag: every frame is.
        let byTag = B.frame("TIT2", content)
        #expect(try ID3OnAir(tag: B.tag(byTag, flags: 0x80)).title == "ÿes")
    }

    @Test func anExtendedHeaderIsSkipped() throws {
        // 2.4: a syncsafe size that counts itself (6 bytes: size, 1 flag byte, no flags).
        let v4 = B.syncsafe(6) + [1, 0] + B.frame("TIT2", B.text("Extended"))
        #expect(try ID3OnAir(tag: B.tag(v4, flags: 0x40)).title == "Extended")
        // 2.3: a size that does not count itself (6 bytes follow it).
        let v3 = B.bigEndian(6) + [0, 0, 0, 0, 0, 0] + B.frame("TIT2", B.text("Extended", encoding: 0), version: 3)
        #expect(try ID3OnAir(tag: B.tag(v3, version: 3, flags: 0x40)).title == "Extended")
    }

    @Test func brokenTagsThrowANamedErrorAndNeverTrap() {
        func refusal(_ bytes: [UInt8]) -> StreamFormatError? {
            do throws(StreamFormatError) {
                _ = try ID3OnAir(tag: bytes)
                return nil
            } catch {
                return error
            }
        }
        // Not a tag; cut short; another version; a size not syncsafe.
        #expect(refusal([0xFF, 0xF1, 0x50])?.kind == .malformed)
        #expect(refusal(Array(B.tag(B.frame("TIT2", B.text("Cut"))).dropLast(2)))?.message.contains("only") == true)
        #expect(refusal(B.tag(B.frame("TIT2", B.text("Old")), version: 2))?.kind == .unsupported)
        #expect(refusal(Array("ID3".utf8) + [4, 0, 0, 0x80, 0, 0, 0])?.kind == .malformed)
        // A frame claiming more than the tag holds, a frame named with garbage.
        let overlong = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 12] + Array("TIT2".utf8) + [0, 0, 0x7F, 0x7F, 0, 0, 3, 65]
        #expect(refusal(overlong)?.message.contains("TIT2") == true)
        #expect(refusal(B.tag([0x01, 0x02, 0x03, 0x04, 0, 0, 0, 1, 0, 0, 0]))?.kind == .malformed)
        // Larger than the bound: refused from its header alone.
        let huge = Array("ID3".utf8) + [4, 0, 0] + B.syncsafe(ID3OnAir.maximumTagBytes)
        #expect(refusal(huge)?.kind == .tooLarge)
        // Every prefix of a good tag, and every byte of it changed: an answer or an error, no trap.
        let good = B.tag(B.frame("TPE1", B.text("A", encoding: 1)) + B.frame("TIT2", B.text("B", encoding: 2)), flags: 0x80)
        for length in 0...good.count { _ = refusal(Array(good.prefix(length))) }
        for index in good.indices {
            for value: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                var bent = good
                bent[index] = value
                _ = refusal(bent)
            }
        }
    }

    @Test func theTagLengthIsWhatTheDemuxerIsNotGiven() {
        let tag = B.tag(B.frame("TIT2", B.text("On Air")))
        #expect(ID3OnAir.tagLength(tag + [0xFF, 0xF1]) == tag.count)
        #expect(ID3OnAir.tagLength([0xFF, 0xF1, 0x50]) == 0)
        // A footer (2.4's flag 0x10) is part of it.
        var footed = B.tag(B.frame("TIT2", B.text("F")), flags: 0x10)
        footed += Array("3DI".utf8) + [4, 0, 0x10] + Array(footed[6..<10])
        #expect(ID3OnAir.tagLength(footed + [0xFF]) == footed.count)
    }

    @Test func aTimedMetadataPayloadIsReadWithOrWithoutItsAccessUnitHeader() throws {
        for version: UInt8 in [3, 4] {
            let tag = B.tag(B.frame("TIT2", B.text("Timed", encoding: 0), version: version), version: version)
            // As FFmpeg hands it out from an H.222.0 access unit: the tag itself.
            #expect(try ID3OnAir(timedMetadata: tag).title == "Timed", "v2.\(version)")
            // The access unit's header still on.
            let wrapped: [UInt8] = [0, 1, 0xDF] + B.bigEndian(tag.count).suffix(2) + tag
            #expect(ID3OnAir.tag(inTimedMetadata: wrapped) == tag)
            #expect(try ID3OnAir(timedMetadata: wrapped).title == "Timed", "v2.\(version)")
            // A bare tag whose first 5 bytes the demuxer took for that header: put back.
            let cut = Array(tag.dropFirst(5))
            #expect(try ID3OnAir(timedMetadata: cut).title == "Timed", "v2.\(version)")
        }
        // Anything else stays as it is, and does not parse.
        #expect(ID3OnAir.tag(inTimedMetadata: [1, 2, 3]) == [1, 2, 3])
        #expect(throws: StreamFormatError.self) { try ID3OnAir(timedMetadata: [0x80, 0xFF, 0, 0, 3, 1, 2, 3]) }
        #expect(throws: StreamFormatError.self) { try ID3OnAir(timedMetadata: []) }
    }
}
