// `Content-Disposition` for a recording: play in the page, or save with its name.

/// Builds `inline; filename="Talk.flac"` or `attachment; …` (RFC 6266) with, for a name that is
/// not plain ASCII, `filename*=UTF-8''…` (RFC 8187, formerly 5987) and an ASCII fallback. Pure.
enum HTTPContentDisposition {
    static func value(attachment: Bool, filename: String) -> String {
        let disposition = attachment ? "attachment" : "inline"
        var fallback = ""
        var plain = true
        for scalar in filename.unicodeScalars {
            switch scalar.value {
            case 0x20...0x7e where scalar != "\"" && scalar != "\\" && scalar != "%":
                fallback.unicodeScalars.append(scalar)
            default:
                // Not ASCII, a control character, or `"`, `\`, `%` (legal in a quoted string
                // but read differently by different browsers): `_` in the fallback, the exact
                // name in filename*.
                fallback.append("_")
                plain = false
            }
        }
        if plain { return "\(disposition); filename=\"\(fallback)\"" }
        return "\(disposition); filename=\"\(fallback)\"; filename*=UTF-8''\(percentEncoded(filename))"
    }

    /// RFC 8187's `attr-char`s kept, every other byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(byte)
            case _ where "!#$&+-.^_`|~".utf8.contains(byte):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
