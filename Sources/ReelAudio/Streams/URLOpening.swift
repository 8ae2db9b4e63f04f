// Opening a URL off the caller's thread: the open runs on a thread of its own, can be
// cancelled, and tells its outcome once.

import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A stream a station playlist lists: its URL (absolute, http or https) and the title the
/// playlist gives it.
public struct ListedStream: Equatable, Sendable {
    public var url: String
    public var title: String?

    public init(url: String, title: String? = nil) {
        self.url = url
        self.title = title
    }
}

/// What a URL turned out to be once opened.
public enum URLContent: @unchecked Sendable {
    /// A stream (or a file on a server) with its decoder, ready to play.
    case audio(reader: AudioFileReader, stream: HTTPStream)
    /// A station playlist: the streams it lists, in order (at least one).
    case stations([ListedStream])
}

/// Ends an open early: the network threads it started are stopped, and the open throws
/// `unreachable` ("cancelled"). Any thread.
public final class URLOpenCancel: @unchecked Sendable {
    private struct State {
        var cancelled = false
        var streams: [HTTPStream] = []
    }
    private let state = Locked(State())

    public init() {}

    public var isCancelled: Bool { state.current.cancelled }

    /// Stops every stream the open started, and any it would start.
    public func cancel() {
        let streams = state.withLock { state -> [HTTPStream] in
            state.cancelled = true
            defer { state.streams = [] }
            return state.streams
        }
        for stream in streams { stream.stop() }
    }

    /// Keeps `stream` to stop on `cancel`; false (and `stream` is not started) once cancelled.
    func register(_ stream: HTTPStream) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.streams.append(stream)
            return true
        }
    }

    static func cancelled(_ url: String) -> ReelError {
        ReelError(.unreachable, "\(url): cancelled")
    }
}

/// One URL being opened on a thread of its own (`reel-open`), from `start` until it has an
/// outcome, told once to `completion` on that thread. `cancel` (any thread) ends it within
/// libcurl's next callback (about a second at most), and its network threads with it.
public final class URLOpening: @unchecked Sendable {
    public let url: String
    private let configuration: StreamConfiguration
    private let onChange: @Sendable () -> Void
    private let canceller = URLOpenCancel()

    public init(url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {}) {
        self.url = url
        self.configuration = configuration
        self.onChange = onChange
    }

    /// Starts the open; `completion` gets the outcome on the opening thread (a cancelled open
    /// gets `unreachable`, and whatever it had opened is closed first).
    public func start(completion: @escaping @Sendable (Result<URLContent, ReelError>) -> Void) {
        let thread = OSThread.start(name: "reel-open", realtime: false) { [self] in
            let result: Result<URLContent, ReelError>
            do throws(ReelError) {
                result = .success(try URLSource.open(url: url, configuration: configuration, onChange: onChange, cancel: canceller))
            } catch {
                result = .failure(error)
            }
            if canceller.isCancelled, case .success(.audio(_, let stream)) = result {
                stream.stop()
                completion(.failure(URLOpenCancel.cancelled(url)))
                return
            }
            completion(result)
        }
        pthread_detach(thread)
    }

    /// Fetches the station playlist at `url` on a thread of its own (`URLSource.fetchStations`):
    /// `completion` gets its streams, nil when `url` is a stream, or why it failed. The result
    /// ends it early.
    public static func fetchStations(
        url: String, configuration: StreamConfiguration,
        completion: @escaping @Sendable (Result<[ListedStream]?, ReelError>) -> Void
    ) -> URLOpenCancel {
        let canceller = URLOpenCancel()
        let thread = OSThread.start(name: "reel-open", realtime: false) {
            do throws(ReelError) {
                completion(.success(try URLSource.fetchStations(url: url, configuration: configuration, cancel: canceller)))
            } catch {
                completion(.failure(error))
            }
        }
        pthread_detach(thread)
        return canceller
    }

    /// Ends the open (its network threads stop); the completion still comes, with a failure.
    public func cancel() { canceller.cancel() }

    public var isCancelled: Bool { canceller.isCancelled }
}
