// reel-bench decode: files played through AudioFileOpener with no device, for
// scripts/fuzz-decoders (the Swift side of the decoder fuzzing, under --sanitize=address).

#if canImport(Glibc)
import Glibc
#endif
import ReelAudio
import ReelModel
import ReelTags

/// `reel-bench decode [--from N] [--seconds S] LIST`: for each path in the file LIST (one a
/// line), from the N-th (0-based), prints `begin N PATH`, then opens it as playing does
/// (`AudioFileOpener.open`), reads it to its end (at most 30 minutes at 48 kHz), seeks to the
/// start, a third, the middle, near and past the end and reads a little after each, drops the
/// reader and prints `ok N READER frames=F`, or `refused N REASON MESSAGE`; then reads its
/// tags as the music scan does (`TagReader`). A refusal must be unsupported_format, corrupt_file
/// or io_error and name the file, and an FFmpeg reader must not play past the length its
/// container declares: else it prints `contract N …` and exits 1. Each file has an alarm of S
/// seconds (default 30): a hang ends the process with SIGALRM, and a crash ends it too, so the
/// caller reads the last `begin` line to know which file it was, and starts again after it.
/// Prints `maxrss_kb=…` at the end.
func decodeCommand(_ arguments: [String]) -> Never {
    var from = 0
    var seconds: UInt32 = 30
    var list: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        switch argument {
        case "--from", "--seconds":
            guard let value = rest.popFirst(), let number = Int(value), number >= 0 else { fail("\(argument) needs a number") }
            if argument == "--from" { from = number } else { seconds = UInt32(max(1, number)) }
        default: list = argument
        }
    }
    guard let list, let text = readText(list) else { fail("decode needs a readable list of files") }
    let paths = text.split(separator: "\n").map(String.init)
    for index in paths.indices where index >= from {
        let path = paths[index]
        printLine("begin \(index) \(path)")
        alarm(seconds)
        do throws(ReelError) {
            let reader = try AudioFileOpener.open(path: path)
            let frames = try exercise(reader, index: index)
            printLine("ok \(index) \(type(of: reader)) frames=\(frames)")
        } catch {
            let named = error.message.contains(path)
            guard [.unsupportedFormat, .corruptFile, .ioError].contains(error.reason), named else {
                printLine("contract \(index) \(error.reason.rawValue) \(error.message)")
                exit(1)
            }
            printLine("refused \(index) \(error.reason.rawValue) \(error.message)")
        }
        // The music scan reads the tags of what a decoder opened; TagLib by the suffix.
        _ = try? TagReader.read(path: path)
        alarm(0)
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    printLine("maxrss_kb=\(usage.ru_maxrss)")
    exit(0)
}

/// Reads `reader` to its end, then seeks and reads after each seek; the frames of the first read.
/// A read or seek that fails with a ReelError is what a player shows; it ends the file here too.
private func exercise(_ reader: AudioFileReader, index: Int) throws(ReelError) -> Int64 {
    let format = reader.pcmFormat
    guard format.channels > 0, format.sampleRate > 0 else {
        printLine("contract \(index) \(format.channels) channels at \(format.sampleRate) Hz")
        exit(1)
    }
    let chunk = 4096
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk * format.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    func readFrames(upTo limit: Int64) throws(ReelError) -> Int64 {
        var total: Int64 = 0
        while total < limit {
            let frames = try reader.read(into: buffer, frames: Int(min(Int64(chunk), limit - total)))
            guard frames >= 0, frames <= chunk else {
                printLine("contract \(index) read gave \(frames) frames of \(chunk)")
                exit(1)
            }
            if frames == 0 { break }
            total += Int64(frames)
        }
        return total
    }
    let total = try readFrames(upTo: 48000 * 60 * 30)
    if reader is FFmpegReader, reader.frameCountIsFinal, let count = reader.frameCount, total > count {
        printLine("contract \(index) read \(total) frames of a file whose container says \(count)")
        exit(1)
    }
    let length = max(reader.frameCount ?? total, 1)
    for target in [0, length / 3, length / 2, max(length - 10, 0), length + 4096] {
        try reader.seek(to: target)
        _ = try readFrames(upTo: Int64(3 * chunk))
    }
    return total
}

private func readText(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
