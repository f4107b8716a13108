import Foundation

/// SplitMix64: a small deterministic generator, so the demo, the benchmarks and the tests'
/// generated data are reproducible from a seed. Not for anything secret.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64

    package init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Normally distributed (Box–Muller).
    package mutating func normal(mean: Double, sd: Double) -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return mean + sd * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    package mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
}
