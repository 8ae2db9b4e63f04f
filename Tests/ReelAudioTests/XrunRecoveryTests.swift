import Glibc
import ReelAudio
import Testing

@Suite struct XrunRecoveryTests {
    @Test func underrunIsRecoveredByPrepareAndCounted() {
        let device = FakeOutput()
        var counters = XrunCounters()
        let outcome = XrunRecovery.recover(from: -EPIPE, device: device, counters: &counters, periodMilliseconds: 10)
        #expect(outcome == nil)
        #expect(counters.xruns == 1)
        #expect(device.state.calls == ["prepare"])
    }

    @Test func suspendIsResumedAfterTheDeviceStopsSayingAgain() {
        let device = FakeOutput()
        device.script { $0.resumeResults = [-EAGAIN, -EAGAIN, 0] }
        var counters = XrunCounters()
        var slept = 0
        let outcome = XrunRecovery.recover(
            from: -ESTRPIPE, device: device, counters: &counters, periodMilliseconds: 10, sleep: { slept += $0 })
        #expect(outcome == nil)
        #expect(counters.suspends == 1)
        #expect(device.state.calls == ["resume", "resume", "resume"])
        #expect(slept == 200)
    }

    @Test func suspendWithoutResumeSupportFallsBackToPrepare() {
        let device = FakeOutput()
        device.script { $0.resumeResults = [-ENOSYS] }
        var counters = XrunCounters()
        let outcome = XrunRecovery.recover(from: -ESTRPIPE, device: device, counters: &counters, periodMilliseconds: 10)
        #expect(outcome == nil)
        #expect(device.state.calls == ["resume", "prepare"])
    }

    @Test func suspendThatNeverEndsGivesUp() {
        let device = FakeOutput()
        device.script { $0.resumeResults = Array(repeating: -EAGAIN, count: 10) }
        var counters = XrunCounters()
        let outcome = XrunRecovery.recover(
            from: -ESTRPIPE, device: device, counters: &counters, periodMilliseconds: 10, resumeAttempts: 5,
            sleep: { _ in })
        #expect(outcome == -EAGAIN)
    }

    @Test func wouldBlockWaitsAndRetries() {
        let device = FakeOutput()
        var counters = XrunCounters()
        #expect(XrunRecovery.recover(from: -EAGAIN, device: device, counters: &counters, periodMilliseconds: 10) == nil)
        #expect(device.state.calls == ["wait"])
        #expect(XrunRecovery.recover(from: -EINTR, device: device, counters: &counters, periodMilliseconds: 10) == nil)
        #expect(counters == XrunCounters())
    }

    @Test(arguments: [-ENODEV, -EIO, -EBADFD, -ENOTTY])
    func otherErrorsGiveUp(code: Int32) {
        let device = FakeOutput()
        var counters = XrunCounters()
        #expect(XrunRecovery.recover(from: code, device: device, counters: &counters, periodMilliseconds: 10) == code)
        #expect(device.state.calls.isEmpty)
    }
}
