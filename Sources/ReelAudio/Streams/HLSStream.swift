// An HLS stream's network side: its own thread fetching the media playlist on the planner's
// reload times and the segments in order into the stream's buffer, for FFmpeg to demux.

import CCurl
import ReelModel
import ReelRuntime
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
#endif

/// One HLS URL, fetched on a thread of its own (`reel-hls`) from `start` until the playlist
/// ends (`EXT-X-ENDLIST`, every segment fetched), it fails for good, or `stop`. A master
/// playlist is resolved first (`HLSMasterPlaylist.chooseAudio`: the audio-only variant of the
/// highest bandwidth, else a variant's default audio rendition, else the variant of the lowest
/// bandwidth). Segments (MPEG-TS, fMP4 after their `EXT-X-MAP` init section, packed ADTS) are
/// written whole into `stream.buffer`, in order; a discontinuity (`EXT-X-DISCONTINUITY`, a
/// skip, a restarted encoder, a segment that could not be fetched) adds a boundary there, where
/// the decoder opens a new demuxer. `stream` is an `HTTPStream` that is never started: its
/// buffer and its status (state, reconnects, title: `ID3OnAir` of a packed-audio segment's
/// ID3 tag; an MPEG-TS segment's timed-ID3 stream is the decoder's) are what the player reads
/// for any URL.
final class HLSStream: @unchecked Sendable {
    let url: String
    let stream: HTTPStream
    var boundaries: StreamBoundaries { stream.boundaries }
    private let configuration: StreamConfiguration

    /// The most bytes of one segment or init section (a segment of audio is 0.1–2 MB).
    static let maximumSegmentBytes = 16 << 20
    /// Master playlists followed at most (a master that names a master).
    static let maximumMasterDepth = 2

    init(url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void) {
        self.url = url
        self.configuration = configuration
        stream = HTTPStream(url: url, configuration: configuration, onChange: onChange)
    }

    /// Starts the fetching thread. Once.
    func start() {
        let thread = OSThread.start(name: "reel-hls", realtime: false) { [self] in run() }
        pthread_detach(thread)
    }

    private var buffer: StreamBuffer { stream.buffer }

    // MARK: The fetching thread

    private func run() {
        var media: HLSMediaPlaylist
        var mediaURL = url
        do throws(ReelError) {
            (media, mediaURL) = try resolve()
        } catch {
            end(with: error)
            return
        }
        var head = HTTPResponseHead()
        head.status = 200
        head.contentType = "application/vnd.apple.mpegurl"
        stream.update { status in
            status.head = head
            status.state = .buffering
        }
        var planner = HLSSegmentPlanner()
        var loadStart = seconds()
        var failures = 0
        var played = false
        while !buffer.isStopped {
            for event in planner.playlistLoaded(media, loadStartedAt: loadStart) {
                if case .restarted = event { stream.update { $0.reconnects += 1 } }
            }
            while let fetch = planner.nextFetch() {
                if buffer.isStopped { return }
                if fetch.discontinuity || fetch.initSection != nil { boundaries.add(at: buffer.written) }
                do throws(ReelError) {
                    var initBytes: [UInt8] = []
                    if let section = fetch.initSection {
                        initBytes = try fetchWhole(section.url, range: section.byteRange, limit: Self.maximumSegmentBytes)
                    }
                    let bytes = try fetchWhole(fetch.segment.url, range: fetch.segment.byteRange, limit: Self.maximumSegmentBytes)
                    noteTimedMetadata(bytes)
                    // Packed audio's leading ID3 tag (its timed metadata, read above) is not
                    // audio: the demuxer gets the frames after it.
                    let audio = bytes.dropFirst(ID3OnAir.tagLength(bytes))
                    if !write(initBytes) || !write(Array(audio)) { return }
                    played = true
                } catch {
                    if buffer.isStopped { return }
                    // A segment that cannot be fetched (expired, a blip) is skipped; the audio
                    // after it does not continue it.
                    boundaries.add(at: buffer.written)
                }
            }
            guard let reloadAt = planner.nextReloadAt else {
                // EXT-X-ENDLIST: every segment was fetched.
                buffer.finish(error: nil)
                return
            }
            let wait = max(0, reloadAt - seconds())
            if !buffer.sleep(milliseconds: Int(wait * 1000)) { return }
            // Reload; failures in a row back off as a live stream's reconnects do.
            while true {
                loadStart = seconds()
                do throws(ReelError) {
                    guard case .media(let reloaded) = try fetchPlaylist(mediaURL) else {
                        throw ReelError(.unreachable, "\(mediaURL) is no longer a media playlist")
                    }
                    media = reloaded
                    if failures > 0 { stream.update { $0.state = .playing } }
                    failures = 0
                    break
                } catch {
                    if buffer.isStopped { return }
                    failures += 1
                    let decision = StreamReconnect.decide(
                        url: url, everPlayed: played, received: 0, length: nil, rangesWork: false, failure: error,
                        attempt: failures)
                    guard case .retry(let milliseconds, _) = decision else {
                        if case .fail(let failure) = decision { end(with: failure) } else { buffer.finish(error: nil) }
                        return
                    }
                    stream.update { status in
                        status.state = .reconnecting
                        status.reconnects += 1
                    }
                    if !buffer.sleep(milliseconds: milliseconds) { return }
                }
            }
        }
    }

    /// The media playlist to play and its URL, through a master playlist when `url` is one.
    private func resolve() throws(ReelError) -> (HLSMediaPlaylist, String) {
        var current = url
        for _ in 0...Self.maximumMasterDepth {
            switch try fetchPlaylist(current) {
            case .media(let media):
                return (media, current)
            case .master(let master):
                guard let chosen = master.chooseAudio() else {
                    throw ReelError(.unreachable, "\(current) is an HLS master playlist without variants")
                }
                current = chosen
            }
        }
        throw ReelError(.unreachable, "\(url): HLS master playlists lead to more master playlists")
    }

    private func fetchPlaylist(_ playlistURL: String) throws(ReelError) -> HLSPlaylist {
        let bytes = try fetchWhole(playlistURL, range: nil, limit: maximumStationPlaylistBytes)
        do throws(StreamFormatError) {
            return try parseHLSPlaylist(bytes, url: playlistURL)
        } catch {
            switch error.kind {
            case .unsupported: throw ReelError(.unsupportedFormat, "cannot play \(url): \(error.message)")
            default: throw ReelError(.unreachable, "\(playlistURL): \(error.message)")
            }
        }
    }

    /// Writes `bytes` into the buffer (waiting while it is full); false once stopped.
    private func write(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return true }
        return bytes.withUnsafeBytes { buffer.write($0.baseAddress!, count: $0.count) }
    }

    /// A packed-audio segment's leading ID3 tag (its timed metadata): the title on air from its
    /// first audio byte. A broken tag is skipped with a notice. (An MPEG-TS segment's timed ID3
    /// is a stream of its own, read by the demuxer: `FFmpegStreamDecoding`.)
    private func noteTimedMetadata(_ bytes: [UInt8]) {
        guard ID3OnAir.startsTag(bytes) else { return }
        do throws(StreamFormatError) {
            let onAir = try ID3OnAir(tag: Array(bytes.prefix(ID3OnAir.maximumTagBytes)))
            if let title = onAir.streamTitle { stream.noteTitleReceived(title, at: buffer.written) }
        } catch {
            stream.noteSkipped("\(url): a segment's ID3 tag was skipped: \(error.message)")
        }
    }

    private func end(with error: ReelError) {
        stream.update { $0.failure = error }
        buffer.finish(error: error)
    }

    private func seconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }

    // MARK: Fetching

    /// The state of one whole-resource transfer, for libcurl's callbacks.
    private final class Transfer {
        var head = HTTPResponseHead()
        var body: [UInt8] = []
        var limit: Int
        var tooLarge = false
        var refused: ReelError?
        let url: String
        let stopped: () -> Bool

        init(url: String, limit: Int, stopped: @escaping () -> Bool) {
            self.url = url
            self.limit = limit
            self.stopped = stopped
        }
    }

    /// The body of `resourceURL` (of `range` when given), at most `limit` bytes: else
    /// `unreachable` naming the URL and what failed.
    private func fetchWhole(_ resourceURL: String, range: HLSByteRange?, limit: Int) throws(ReelError) -> [UInt8] {
        let wanted = range.map { Int(min(Int64(limit) + 1, $0.length)) } ?? limit
        let transfer = Transfer(url: resourceURL, limit: wanted, stopped: { [buffer] in buffer.isStopped })
        var outcome = reel_curl_outcome()
        let stage: reel_curl_stage = resourceURL.withCString { urlText in
            (configuration.extraCAFile ?? "").withCString { caText in
                var request = reel_curl_request()
                request.url = urlText
                request.extra_ca_file = configuration.extraCAFile == nil ? nil : caText
                request.connect_timeout = configuration.connectTimeout
                request.low_speed_limit = configuration.lowSpeedBytes
                request.low_speed_time = configuration.lowSpeedSeconds
                request.max_redirects = configuration.maxRedirects
                request.range_start = range?.offset ?? -1
                request.icy_metadata = 0
                request.context = Unmanaged.passUnretained(transfer).toOpaque()
                request.on_header = { context, line, length in
                    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                    transfer.head.take(line: String(decoding: UnsafeRawBufferPointer(start: line, count: length), as: UTF8.self))
                    guard transfer.head.complete, !(300..<400).contains(transfer.head.status),
                        !(100..<200).contains(transfer.head.status)
                    else { return 0 }
                    if transfer.head.status != 200 && transfer.head.status != 206 {
                        transfer.refused = ReelError(.unreachable, "\(transfer.url) answered HTTP \(transfer.head.status)")
                        return 1
                    }
                    return 0
                }
                request.on_body = { context, data, length in
                    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                    let room = transfer.limit - transfer.body.count
                    let taken = min(room, length)
                    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: taken))
                    if taken < length {
                        transfer.tooLarge = true
                        return 0
                    }
                    return length
                }
                request.should_stop = { context in
                    Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().stopped() ? 1 : 0
                }
                return reel_curl_perform(&request, &outcome)
            }
        }
        if let refused = transfer.refused { throw refused }
        if transfer.tooLarge {
            // A byte range is complete once its length came; anything else is too large.
            if let range, transfer.body.count >= Int(range.length) { return transfer.body }
            throw ReelError(.unreachable, "\(resourceURL) is larger than \(limit) bytes")
        }
        if stage != REEL_CURL_OK { throw HTTPStream.error(url: resourceURL, stage: stage, outcome: &outcome) }
        return transfer.body
    }
}
