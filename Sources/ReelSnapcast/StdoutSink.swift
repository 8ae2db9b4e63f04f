// The plugin's replies, pushes and log lines go to snapserver on stdout. Main thread only.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole lines to a descriptor, blocking until each is written.
public final class StdoutSink: PluginSink {
    public let fileDescriptor: Int32
    /// Set when a write failed (snapserver went away): the loop then ends.
    public private(set) var isBroken = false

    public init(fileDescriptor: Int32 = 1) {
        self.fileDescriptor = fileDescriptor
    }

    public func write(_ line: [UInt8]) {
        guard !isBroken else { return }
        var offset = 0
        while offset < line.count {
            let written = line[offset...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #else
                Darwin.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                isBroken = true
                return
            }
            offset += written
        }
    }
}
