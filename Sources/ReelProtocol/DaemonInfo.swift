// The result of `daemon.info`.
//
// The daemon fills it in and encodes it with `.json`; the CLI (`reel info`, version checks)
// decodes it with `init(json:)`.

import ReelModel

/// What `daemon.info` returns: `{version, protocol, device, captureDevice, dataDir, uptime,
/// formats, decoders, listeners}`.
public struct DaemonInfo: Sendable, Equatable {
    /// The protocol version this build speaks (`protocol` in the reply).
    public static let currentProtocolVersion = 3

    /// The daemon's version, e.g. `1.0.0`.
    public var version: String
    /// `protocol` on the wire.
    public var protocolVersion: Int
    /// The playback device, e.g. `default` or `hw:0,0`.
    public var device: String
    /// The capture device.
    public var captureDevice: String
    /// Where recordings and the library database live.
    public var dataDir: String
    /// Seconds since the daemon started.
    public var uptime: Double
    /// The codecs the daemon can play, e.g. `["flac","mp3","opus","vorbis","wav"]`.
    public var formats: [String]
    /// The same codecs with the file suffixes and MIME types each is known by (the codec
    /// registry): `[{name, suffixes, mimeTypes}]`.
    public var decoders: [CodecDescription]
    /// Where the daemon listens, one entry per address of every front end.
    public var listeners: [Listener]
    /// The URL schemes a source may have (`["http", "https"]`).
    public var urlSchemes: [String] = []

    /// One listening address: `{"protocol": "json-rpc"|"mpd", "address": "127.0.0.1:6600"}`.
    public struct Listener: Sendable, Equatable {
        public var protocolName: String
        public var address: String
        public init(protocolName: String, address: String) {
            self.protocolName = protocolName
            self.address = address
        }
    }

    public init(
        version: String, protocolVersion: Int = DaemonInfo.currentProtocolVersion, device: String,
        captureDevice: String, dataDir: String, uptime: Double, formats: [String], decoders: [CodecDescription] = [],
        listeners: [Listener] = []
    ) {
        self.decoders = decoders
        self.listeners = listeners
        self.version = version
        self.protocolVersion = protocolVersion
        self.device = device
        self.captureDevice = captureDevice
        self.dataDir = dataDir
        self.uptime = uptime
        self.formats = formats
    }

    public var json: JSONValue {
        [
            "version": .string(version),
            "protocol": .int(Int64(protocolVersion)),
            "device": .string(device),
            "captureDevice": .string(captureDevice),
            "dataDir": .string(dataDir),
            "uptime": .double(uptime),
            "formats": .array(formats.map(JSONValue.string)),
            "decoders": .array(
                decoders.map {
                    [
                        "name": .string($0.name), "suffixes": .array($0.suffixes.map(JSONValue.string)),
                        "mimeTypes": .array($0.mimeTypes.map(JSONValue.string)),
                    ]
                }),
            "listeners": .array(listeners.map { ["protocol": .string($0.protocolName), "address": .string($0.address)] }),
            "urlSchemes": .array(urlSchemes.map(JSONValue.string)),
        ]
    }

    /// `formats` and `decoders` may be absent (empty).
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "daemon.info")
        var formats: [String] = []
        if let raw = reader.optional("formats") {
            guard let elements = raw.arrayValue else { throw reader.wrongType("formats", "an array of strings") }
            for element in elements {
                guard let format = element.stringValue else { throw reader.wrongType("formats", "an array of strings") }
                formats.append(format)
            }
        }
        var decoders: [CodecDescription] = []
        if let raw = reader.optional("decoders") {
            guard let elements = raw.arrayValue else { throw reader.wrongType("decoders", "an array of objects") }
            for element in elements {
                let entry = try ObjectReader(element, as: "decoder")
                func strings(_ key: String) throws(JSONDecodingError) -> [String] {
                    guard let elements = entry.optional(key)?.arrayValue,
                          case let values = elements.compactMap(\.stringValue), values.count == elements.count
                    else {
                        throw entry.wrongType(key, "an array of strings")
                    }
                    return values
                }
                decoders.append(
                    CodecDescription(name: try entry.string("name"), suffixes: try strings("suffixes"), mimeTypes: try strings("mimeTypes")))
            }
        }
        var listeners: [Listener] = []
        if let raw = reader.optional("listeners") {
            guard let elements = raw.arrayValue else { throw reader.wrongType("listeners", "an array of objects") }
            for element in elements {
                let entry = try ObjectReader(element, as: "listener")
                listeners.append(Listener(protocolName: try entry.string("protocol"), address: try entry.string("address")))
            }
        }
        self.init(
            version: try reader.string("version"), protocolVersion: try reader.int("protocol"),
            device: try reader.string("device"), captureDevice: try reader.string("captureDevice"),
            dataDir: try reader.string("dataDir"), uptime: try reader.double("uptime"), formats: formats,
            decoders: decoders, listeners: listeners)
        urlSchemes = reader.optional("urlSchemes")?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
