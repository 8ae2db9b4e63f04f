import Testing

@testable import ReelDaemon

@Suite struct HTTPContentDispositionTests {
    @Test func aPlainNameIsQuoted() {
        #expect(HTTPContentDisposition.value(attachment: false, filename: "Standup.flac") == #"inline; filename="Standup.flac""#)
        #expect(
            HTTPContentDisposition.value(attachment: true, filename: "Talk 2026-11-22.wav")
                == #"attachment; filename="Talk 2026-11-22.wav""#)
    }

    @Test func aNameBeyondASCIIGetsAnRFC8187Form() {
        #expect(
            HTTPContentDisposition.value(attachment: true, filename: "Été à Zürich.opus")
                == #"attachment; filename="_t_ _ Z_rich.opus"; filename*=UTF-8''%C3%89t%C3%A9%20%C3%A0%20Z%C3%BCrich.opus"#)
        #expect(
            HTTPContentDisposition.value(attachment: false, filename: "会议.flac")
                == #"inline; filename="__.flac"; filename*=UTF-8''%E4%BC%9A%E8%AE%AE.flac"#)
    }

    @Test func quotesBackslashesPercentsAndControlsNeverReachTheQuotedName() {
        let value = HTTPContentDisposition.value(attachment: true, filename: "a\"b\\c%d\r\ne.mp3")
        #expect(value == #"attachment; filename="a_b_c_d__e.mp3"; filename*=UTF-8''a%22b%5Cc%25d%0D%0Ae.mp3"#)
    }

    @Test func attrCharsStayAsTheyAre() {
        #expect(HTTPContentDisposition.percentEncoded("a-b_c.d~e!#$&+^`|") == "a-b_c.d~e!#$&+^`|")
        #expect(HTTPContentDisposition.percentEncoded("a b;c'd") == "a%20b%3Bc%27d")
    }
}
