// A thread that waits for external changes to a hardware mixer control and reports them.

import ReelModel
import ReelRuntime

#if canImport(Glibc)
import Glibc
#endif

/// Watches an `ALSAMixer` on a thread of its own: sleeps in `poll` on the mixer's descriptors
/// and a wake pipe (no timer while the device signals its changes), and calls `onChange` with
/// (volume, muted) when they change other than through the mixer's own setters (alsamixer,
/// `pactl`, a hardware knob). `onChange` and `onFailure` run on the watcher's thread.
///
/// Should a device keep its descriptors readable without delivering events, the watcher falls
/// back to reading the control once a second instead of spinning. When the device goes away
/// (an unplugged USB DAC) the watcher calls `onFailure` once and ends.
///
/// Any thread may call `stop`; `deinit` stops too. While the watcher runs it takes in the
/// mixer's events, and the mixer's reads rely on it.
public final class MixerWatcher: Sendable {
    public let mixer: ALSAMixer
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let thread: Locked<pthread_t?>

    public init(
        mixer: ALSAMixer,
        onChange: @escaping @Sendable (_ volume: Int, _ muted: Bool) -> Void,
        onFailure: (@Sendable (ReelError) -> Void)? = nil
    ) {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        self.mixer = mixer
        wakeReader = ends[0]
        wakeWriter = ends[1]
        mixer.setWatched(true)
        let reader = wakeReader
        thread = Locked(OSThread.start(name: "reel-mixer", realtime: false) {
            Self.run(mixer, wakeDescriptor: reader, onChange: onChange, onFailure: onFailure)
        })
    }

    deinit {
        stop()
        if wakeReader >= 0 { close(wakeReader) }
        if wakeWriter >= 0 { close(wakeWriter) }
    }

    /// Ends the thread and waits for it (a call to `onChange` in progress finishes first).
    /// Not from within `onChange`.
    public func stop() {
        guard let running = thread.withLock({ thread -> pthread_t? in
            defer { thread = nil }
            return thread
        }) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
        pthread_join(running, nil)
        mixer.setWatched(false)
    }

    private static func run(
        _ mixer: ALSAMixer, wakeDescriptor: Int32,
        onChange: @Sendable (Int, Bool) -> Void, onFailure: (@Sendable (ReelError) -> Void)?
    ) {
        /// Wake-ups in a row that brought no event: past a few, the descriptors are not to be
        /// trusted and the control is read once a second.
        var emptyWakeups = 0
        while true {
            var descriptors = emptyWakeups >= 3 ? [] : mixer.pollDescriptors()
            let timeout: Int32 = descriptors.isEmpty ? 1000 : -1
            descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR { return }
            if descriptors[descriptors.count - 1].revents != 0 { return }
            do {
                let (events, change) = try mixer.takeEvents()
                emptyWakeups = (ready > 0 && events == 0) ? emptyWakeups + 1 : 0
                if let change { onChange(change.volume, change.muted) }
            } catch {
                onFailure?(error)
                return
            }
        }
    }
}
