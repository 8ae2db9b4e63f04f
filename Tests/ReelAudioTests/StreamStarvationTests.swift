// The engine's rules while a stream waits for the network and when its audio comes again
// (`StreamStarvation`): pure, without a device.

import Testing

@testable import ReelAudio

@Suite struct StreamStarvationTests {
    // A device of 500 ms periods at 44.1 kHz (reeld's default).
    let period = 22050
    let rate = 44100

    @Test func silenceKeepsTheDeviceAtAPeriodAndNoMore() {
        // Below a period queued: a tenth of a period of silence at a time.
        #expect(StreamStarvation.whileWaiting(queuedFrames: 0, periodFrames: period, sampleRate: rate) == .fill(frames: 2205))
        #expect(StreamStarvation.whileWaiting(queuedFrames: period - 1, periodFrames: period, sampleRate: rate) == .fill(frames: 2205))
        // A device not started yet reports what was written: it gets its start threshold (a period).
        #expect(StreamStarvation.lowWater(periodFrames: period) == period)
        // A period or more queued (a full 2 s buffer among them): no silence, the source is asked
        // again soon rather than when the device next has room.
        #expect(StreamStarvation.whileWaiting(queuedFrames: period, periodFrames: period, sampleRate: rate) == .wait(milliseconds: 1))
        #expect(StreamStarvation.whileWaiting(queuedFrames: 4 * period, periodFrames: period, sampleRate: rate)
            == .wait(milliseconds: StreamStarvation.pollMilliseconds))
        // Close to the mark: woken when it is reached, not after it.
        #expect(StreamStarvation.whileWaiting(queuedFrames: period + 441, periodFrames: period, sampleRate: rate) == .wait(milliseconds: 10))
        // A device that reports an error as its delay gets silence.
        #expect(StreamStarvation.whileWaiting(queuedFrames: -5, periodFrames: period, sampleRate: rate) == .fill(frames: 2205))
    }

    @Test func audioAfterSilenceStartsAtOnceOnlyWhenSilenceIsAllThatIsHeard() {
        // The server came back: 1.5 s of silence queued, every frame of the stream heard.
        #expect(StreamStarvation.rejoin(queuedFrames: 66150, unheardSourceFrames: 0, periodFrames: period) == .restart)
        // Some of the stream is still to be heard: cutting it would be heard, the audio follows.
        #expect(StreamStarvation.rejoin(queuedFrames: 66150, unheardSourceFrames: 1, periodFrames: period) == .follow)
        // A filler write or less of silence left: not worth restarting the device.
        #expect(StreamStarvation.rejoin(queuedFrames: 2205, unheardSourceFrames: 0, periodFrames: period) == .follow)
        #expect(StreamStarvation.rejoin(queuedFrames: 2206, unheardSourceFrames: 0, periodFrames: period) == .restart)
        #expect(StreamStarvation.rejoin(queuedFrames: 0, unheardSourceFrames: 0, periodFrames: period) == .follow)
    }
}
