// ITU-R BS.1770's K-weighting (a high shelf, then a high-pass), run over 16-bit samples.

#if canImport(Glibc)
import Glibc
#endif

/// The two second-order sections of BS.1770's K-weighting at one sample rate, with one
/// channel's state, in direct form I. The coefficients are those libebur128 derives for any rate
/// (at 48 kHz they are the standard's table). Pure: no I/O.
struct KWeighting: Sendable {
    // The shelf: y = b0·x + b1·x₁ + b2·x₂ − a1·y₁ − a2·y₂.
    private let b0, b1, b2, a1, a2: Double
    // The high-pass: z = y − 2·y₁ + y₂ − c1·z₁ − c2·z₂.
    private let c1, c2: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0, z1 = 0.0, z2 = 0.0

    init(sampleRate: Int) {
        let rate = Double(max(sampleRate, 1))
        // The shelf (+4 dB above ~1.7 kHz).
        var f0 = 1681.974450955533
        let gain = 3.999843853973347
        var q = 0.7071752369554196
        var k = tan(Double.pi * f0 / rate)
        let vh = pow(10.0, gain / 20.0)
        let vb = pow(vh, 0.4996667741545416)
        var a0 = 1.0 + k / q + k * k
        b0 = (vh + vb * k / q + k * k) / a0
        b1 = 2.0 * (k * k - vh) / a0
        b2 = (vh - vb * k / q + k * k) / a0
        a1 = 2.0 * (k * k - 1.0) / a0
        a2 = (1.0 - k / q + k * k) / a0
        // The high-pass (RLB, ~38 Hz); its numerator is 1, −2, 1.
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / rate)
        a0 = 1.0 + k / q + k * k
        c1 = 2.0 * (k * k - 1.0) / a0
        c2 = (1.0 - k / q + k * k) / a0
    }

    /// Filters `count` samples of one channel, `stride` apart from `start`, and returns the sum of
    /// the squares of the output, in units of a sample squared (divide by 32768² for full scale).
    /// The state carries over to the next call.
    mutating func sumOfSquares(_ samples: UnsafePointer<Int16>, start: Int, count: Int, stride: Int) -> Double {
        var x1 = x1, x2 = x2, y1 = y1, y2 = y2, z1 = z1, z2 = z2
        var sum = 0.0
        var index = start
        for _ in 0..<count {
            let x = Double(samples[index])
            index += stride
            // The terms that do not wait for the previous output first: one multiply-subtract
            // per section on the chain from sample to sample.
            let y = (b0 * x + b1 * x1 + b2 * x2 - a2 * y2) - a1 * y1
            let z = (y - 2 * y1 + y2 - c2 * z2) - c1 * z1
            sum += z * z
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            z2 = z1
            z1 = z
        }
        // Digital silence decays the state into subnormal numbers, slow on most CPUs.
        func flushed(_ value: Double) -> Double { abs(value) < 1e-30 ? 0 : value }
        self.x1 = x1
        self.x2 = x2
        self.y1 = flushed(y1)
        self.y2 = flushed(y2)
        self.z1 = flushed(z1)
        self.z2 = flushed(z2)
        return sum
    }
}
