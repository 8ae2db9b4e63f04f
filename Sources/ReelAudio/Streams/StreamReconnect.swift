// What a stream's network thread does after a transfer ends: pure rules, tested without I/O.

import ReelModel

/// The decision after one transfer of a stream ended, given what it got.
enum StreamReconnect: Equatable {
    /// The body ended where it should: the stream is over.
    case finished
    /// The stream cannot go on: this error ends it.
    case fail(ReelError)
    /// Connect again after `milliseconds`, asking from byte `from` (a Range request) or, with
    /// nil, for the stream afresh (a live stream joins where it is now).
    case retry(milliseconds: Int, from: Int64?)

    /// Consecutive failed connections after which a stream that played gives up (about a
    /// minute and a half with `backoff`).
    static let maxAttempts = 94

    /// Attempts made every quarter of a second before the pause grows to 5 s: a server back
    /// within about 20 s is connected to again within 250 ms of its return (its audio is heard
    /// within a second of it).
    static let quickAttempts = 80

    /// The pause before attempt `attempt` (1 after the first failure): 250 ms up to
    /// `quickAttempts`, then 5 s.
    static func backoff(attempt: Int) -> Int {
        attempt <= quickAttempts ? 250 : 5000
    }

    /// - Parameters:
    ///   - everPlayed: a response of audio came on some connection of this stream (a first
    ///     connection that fails is `unreachable` at once: the URL gave nothing to play).
    ///   - received: bytes of the resource received so far over every connection (the next
    ///     byte's offset).
    ///   - length: the resource's length, when finite.
    ///   - rangesWork: the server takes Range requests (a finite resource resumes from
    ///     `received`; one without ranges cannot resume).
    ///   - failure: why the transfer ended (nil when the body ended normally).
    ///   - attempt: failed connections in a row, this one included.
    static func decide(
        url: String, everPlayed: Bool, received: Int64, length: Int64?, rangesWork: Bool,
        failure: ReelError?, attempt: Int
    ) -> StreamReconnect {
        if let length, received >= length { return .finished }
        guard everPlayed else {
            return .fail(failure ?? ReelError(.unreachable, "\(url) ended before any audio"))
        }
        if length != nil && !rangesWork {
            return .fail(failure.map { ReelError(.unreachable, "\($0.message); \(url) does not take Range requests, so it cannot resume") }
                ?? ReelError(.unreachable, "\(url) ended early and does not take Range requests, so it cannot resume"))
        }
        if attempt > maxAttempts {
            return .fail(ReelError(
                .unreachable, "\(url) is gone: \(maxAttempts) connections failed in a row (\(failure?.message ?? "it closed"))"))
        }
        return .retry(milliseconds: backoff(attempt: attempt), from: length != nil ? received : nil)
    }
}
