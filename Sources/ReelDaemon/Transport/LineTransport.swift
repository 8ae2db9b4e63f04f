// What a line session (JSON-RPC, MPD) writes to: one client connection, whatever carries it.

import NIOCore

/// One client connection as a `LineSession` sees it: bytes out, flow control, closing. The
/// control socket's connections (`PollConnection`), and MPD's connections and the web page's
/// WebSocket (a `ChannelLineTransport` in a NIO pipeline) all are one. Called on `eventLoop` only.
protocol LineTransport: AnyObject {
    var eventLoop: EventLoop { get }
    /// False while the client is not reading: more than the high-water mark (64 KiB) is unread,
    /// until it falls below the low-water mark (32 KiB).
    var isWritable: Bool { get }
    /// Bytes written and not yet taken by the client.
    var bufferedBytes: Int { get }
    /// Queues bytes (sent at the next `flush`).
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Queues a line (sent at the next `flush`).
    func write(_ line: ByteBuffer)
    /// Queues a line and sends everything queued.
    func writeAndFlush(_ line: ByteBuffer)
    /// Queues bytes and sends everything queued.
    func writeAndFlush(_ bytes: UnsafeRawBufferPointer)
    /// Sends everything queued (what the client cannot take yet goes when it can).
    func flush()
    /// Stops taking lines from the client until `resumeReading` (lines already framed still come).
    func pauseReading()
    func resumeReading()
    /// Closes the connection now; what is queued is dropped.
    func close()
    /// Sends what is queued, then closes.
    func closeAfterFlush()
}
